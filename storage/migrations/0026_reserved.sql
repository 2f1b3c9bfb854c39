-- Reserved for another change of issue 32 (the numbers must be contiguous): nothing to do here. Drop this
-- file when that change's migration of the same number is merged.
SELECT 1;
