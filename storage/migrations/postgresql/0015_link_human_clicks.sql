-- (issue 34: this number belongs to another part of the issue; this file keeps the numbers contiguous until it is merged)
-- asyncpg refuses a script of comments only: a statement that does nothing.
SELECT 1;
