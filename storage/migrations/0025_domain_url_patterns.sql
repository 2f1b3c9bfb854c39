-- Long links follow only the targets their domain allows (docs/decisions.md, "Long links (issue 32)"): each
-- domain's allow-list of URL patterns, a JSON array of strings (RE2 regular expressions, full match over the
-- decoded URL), checked by linksvc/domains/url_patterns.py when written. The domains' UPDATE trigger moves the
-- 'domains' generation, so every worker holds the new list at its next request.
ALTER TABLE domains ADD COLUMN url_patterns TEXT NOT NULL DEFAULT '[]';
