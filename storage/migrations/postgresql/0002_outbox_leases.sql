-- 0002: who holds a delivery's lease. Several nodes claim the outbox at once (FOR UPDATE SKIP LOCKED); each
-- claim names its node, so that a node whose lease ran out while it was still sending, and whose delivery
-- another node took over, does not overwrite that node's outcome. NULL: nobody holds it (lease_until is
-- NULL too, or the lease ran out). SQLite has one writer and needs no such column.
ALTER TABLE deliveries ADD COLUMN claimed_by text;
