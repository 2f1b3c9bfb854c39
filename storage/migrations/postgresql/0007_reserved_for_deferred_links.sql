-- Placeholder on branch i22-previews only: this number belongs to the issue 22 deferred-links helper (see the
-- shared contract); it creates nothing. Delete this file when merging that branch (two files with one
-- number make the service refuse to start, so a merge cannot keep both by mistake).
SELECT 1;
