-- 0014 = SQLite's 0029 (issue 34, smart links): where the client of a click is (its country, and region and city
-- with an .mmdb file; never its address) and the name of the link's rule that picked its target (NULL: none
-- matched, or a click stored before rules). Older clicks keep NULL in all four.
ALTER TABLE clicks ADD COLUMN country TEXT;
ALTER TABLE clicks ADD COLUMN region TEXT;
ALTER TABLE clicks ADD COLUMN city TEXT;
ALTER TABLE clicks ADD COLUMN rule TEXT;
