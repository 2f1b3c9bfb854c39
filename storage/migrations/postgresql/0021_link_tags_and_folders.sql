-- 0021 = SQLite's 0036 (issue 36, organising links): a link's folder, and its tags, copied out of its document
-- when it is saved, for the list's filters, the bulk actions and the report's tag and folder rows.
ALTER TABLE links ADD COLUMN folder text;
CREATE INDEX links_folder ON links(account_id, folder);

CREATE TABLE link_tags (
    link_id    text COLLATE "C" NOT NULL REFERENCES links(id) ON DELETE CASCADE,
    account_id text COLLATE "C" NOT NULL,
    tag        text NOT NULL,
    PRIMARY KEY (link_id, tag)
);
CREATE INDEX link_tags_account ON link_tags(account_id, tag, link_id);

-- A tag's colour in the account (Dub's palette), optional: a tag is its name; this is how the dashboard draws it.
CREATE TABLE tag_colors (
    account_id text COLLATE "C" NOT NULL REFERENCES accounts(id) ON DELETE CASCADE,
    tag        text NOT NULL,
    color      text COLLATE "C" NOT NULL,
    PRIMARY KEY (account_id, tag)
);
