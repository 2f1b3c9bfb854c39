-- 0010 = SQLite's 0025 (long links' allow-list): each domain's URL patterns, a JSON array of strings.
ALTER TABLE domains ADD COLUMN url_patterns text COLLATE "C" NOT NULL DEFAULT '[]';
