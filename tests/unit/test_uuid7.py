"""The ids ingest makes (linksvc.loyalty.ids.uuid7): canonical UUIDv7 text, in the order they were made, the
time of their making in the first 48 bits, never repeated across refills of the random pool."""

from __future__ import annotations

import time
import uuid

from linksvc.loyalty.ids import uuid7


def test_ids_are_canonical_v7_in_the_order_made_across_refills() -> None:
    before = time.time_ns() // 1_000_000
    ids = [uuid7() for _ in range(2000)]  # about four refills of the pool (512 ids each)
    after = time.time_ns() // 1_000_000
    parsed = [uuid.UUID(value) for value in ids]
    assert [str(u) for u in parsed] == ids  # lowercase, dashes where a UUID has them
    assert all(u.version == 7 and u.variant == uuid.RFC_4122 for u in parsed)
    assert ids == sorted(ids) and len(set(ids)) == len(ids)
    assert all(before <= u.int >> 80 <= after + 1 for u in parsed)  # +1: a counter that overflowed moves on
