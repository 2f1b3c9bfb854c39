-- 0008 = SQLite's 0023 (link previews): an account's defaults for the preview page; the same table.

CREATE TABLE link_preview_defaults (
    account_id  text COLLATE "C" PRIMARY KEY REFERENCES accounts(id) ON DELETE CASCADE,
    title       text COLLATE "C",
    description text COLLATE "C",
    image_url   text COLLATE "C",
    site_name   text COLLATE "C",
    updated_at  text COLLATE "C" NOT NULL
);
