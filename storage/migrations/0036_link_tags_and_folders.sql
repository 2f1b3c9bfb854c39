-- Issue 36, organising links: a link's tags and folder, kept in its document (`tags`, `folder`) and copied out
-- here when the document is saved (linksvc.resources.kinds.LinkKind), so that the list's filters, the bulk
-- actions and the conversion report's tag and folder rows find them by index. A link has any number of tags and
-- at most one folder (docs/decisions.md, "Tags and folders (issue 36)"). No link had either before.
ALTER TABLE links ADD COLUMN folder TEXT;
CREATE INDEX links_folder ON links(account_id, folder);

CREATE TABLE link_tags (
    link_id    TEXT NOT NULL REFERENCES links(id) ON DELETE CASCADE,
    account_id TEXT NOT NULL,
    tag        TEXT NOT NULL,
    PRIMARY KEY (link_id, tag)
) WITHOUT ROWID;
CREATE INDEX link_tags_account ON link_tags(account_id, tag, link_id);

-- A tag's colour in the account (Dub's palette), optional: a tag is its name; this is how the dashboard draws it.
CREATE TABLE tag_colors (
    account_id TEXT NOT NULL REFERENCES accounts(id) ON DELETE CASCADE,
    tag        TEXT NOT NULL,
    color      TEXT NOT NULL,
    PRIMARY KEY (account_id, tag)
);
