-- Placeholder on the deferred deep links branch only: issue 22 gives 0006 to the custom domains branch, and
-- migrations may not leave gaps. Delete this file when merging after that branch (its 0006 takes the place).
SELECT 1;
