"""Fresh tracking ids (linksvc.random_ids): 32 hexadecimal digits, never repeated, and a forked worker
never hands out its parent's bytes."""

from __future__ import annotations

import os
import re

from linksvc.random_ids import CHUNK, new_tracking_id


def test_ids_are_32_hex_digits_and_do_not_repeat_across_refills() -> None:
    ids = [new_tracking_id() for _ in range(3 * CHUNK // 16 + 5)]
    assert all(re.fullmatch(r"[0-9a-f]{32}", value) for value in ids)
    assert len(set(ids)) == len(ids)


def test_a_forked_process_does_not_repeat_its_parents_ids() -> None:
    new_tracking_id()  # the buffer holds bytes that a careless fork would copy
    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child: its next ids, to the parent
        os.close(read)
        os.write(write, "".join(new_tracking_id() for _ in range(8)).encode())
        os._exit(0)
    os.close(write)
    child = os.read(read, 4096).decode()
    os.close(read)
    os.waitpid(pid, 0)
    parent = [new_tracking_id() for _ in range(8)]
    child_ids = [child[i:i + 32] for i in range(0, len(child), 32)]
    assert len(child_ids) == 8
    assert not set(child_ids) & set(parent)
