-- How far each click journal (linksvc/links/click_journal.py: clicks answered and not yet stored, in a file
-- mapped into memory) is stored. Written in the same transaction as the clicks it stores, so that a process
-- killed between that commit and the journal's own note of it has its stored clicks skipped, not written twice,
-- when its journal is recovered.
CREATE TABLE click_journals (
    name   TEXT PRIMARY KEY,  -- the journal's file name
    stored INTEGER NOT NULL   -- the journal offset up to which its clicks are stored
) WITHOUT ROWID;
