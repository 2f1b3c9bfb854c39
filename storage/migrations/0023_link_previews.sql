-- Link previews (docs/decisions.md, "Link previews"): an account's defaults for the page link-preview fetchers
-- get (title, description, image_url, site_name); a link's own `preview` fields win over them, field by field.
-- One row per account, written by PUT /api/admin/v1/accounts/{id}/link-preview; NULL: no default.

CREATE TABLE link_preview_defaults (
    account_id  TEXT PRIMARY KEY REFERENCES accounts(id) ON DELETE CASCADE,
    title       TEXT,
    description TEXT,
    image_url   TEXT,
    site_name   TEXT,
    updated_at  TEXT NOT NULL
);
