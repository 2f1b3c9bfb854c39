"""The click journal (linksvc.links.click_journal): what a process killed with clicks unwritten leaves, read
back from the file alone, in order, without the clicks the store already holds; a live process's journal is
never taken; the file stays bounded under a steady load."""

from __future__ import annotations

import os
import signal
from collections.abc import Iterator
from pathlib import Path

from linksvc.links import click_journal, click_spill
from linksvc.links.click_journal import ClickJournal, recover


def _row(n: int) -> list[object]:
    return ["acct", f"link-{n}", f"t{n:032d}", 1_700_000_000.5 + n, "ios", False, "destination",
            "Mozilla/5.0 (iPhone) \u00e9", "", {"utm_source": "mail"}]


def _journal_rows(path: Path, marks: dict[str, int] | None = None) -> list[list[object]]:
    return click_journal._records(path.read_bytes(), (marks or {}).get(path.name, 0))


def test_what_is_not_stored_is_read_back_in_order(tmp_path: Path) -> None:
    journal = ClickJournal(str(tmp_path / "db"))
    for n in range(10):
        journal.append(_row(n))
    journal.stored(4)
    assert _journal_rows(journal.path) == [_row(n) for n in range(4, 10)]
    journal.stored(6)  # all stored: the journal starts again from the top
    assert _journal_rows(journal.path) == []
    journal.append(_row(99))
    assert _journal_rows(journal.path) == [_row(99)]
    journal.close()
    assert not journal.path.exists()


def test_the_stores_mark_skips_clicks_committed_before_the_journal_noted_it(tmp_path: Path) -> None:
    journal = ClickJournal(str(tmp_path / "db"))
    for n in range(5):
        journal.append(_row(n))
    mark = journal.mark_after(3)  # what insert_clicks writes with the first three clicks
    assert mark is not None and mark[0] == journal.name
    assert _journal_rows(journal.path, dict([mark])) == [_row(3), _row(4)]


def test_the_stores_mark_still_names_the_same_clicks_after_the_journal_starts_again(tmp_path: Path) -> None:
    """A batch stores every click (the journal starts again from the top), more clicks come, and the process is
    killed before the next batch: the store's mark, noted with the first batch, skips none of the new clicks
    (noted as an offset it did: the new clicks sat below it)."""
    journal = ClickJournal(str(tmp_path / "db"))
    for n in range(6):
        journal.append(_row(n))
    mark = journal.mark_after(6)
    journal.stored(6)  # committed with `mark`; every click stored: the file starts again from the top
    for n in range(6, 9):
        journal.append(_row(n))
    assert mark is not None
    assert _journal_rows(journal.path, dict([mark])) == [_row(n) for n in range(6, 9)]


def test_a_mark_taken_before_the_records_move_names_the_same_clicks(tmp_path: Path) -> None:
    """The writer takes its mark, then (while the batch is written) the file fills and what is not stored
    moves to the top; the batch commits with the mark taken before, and the process is killed before its
    journal notes it: exactly the clicks after the batch are read back, none twice, none lost."""
    journal = ClickJournal(str(tmp_path / "db"), initial_bytes=2048)
    for n in range(4):
        journal.append(_row(n))
    journal.stored(4)
    for n in range(4, 8):
        journal.append(_row(n))
    mark = journal.mark_after(2)  # the batch of clicks 4 and 5, being written
    size = journal.path.stat().st_size
    appended = 8
    while journal.path.stat().st_size == size and appended < 40:  # more clicks until the records move or grow
        journal.append(_row(appended))
        appended += 1
    assert mark is not None
    assert _journal_rows(journal.path, dict([mark])) == [_row(n) for n in range(6, appended)]
    journal.stored(2)
    assert _journal_rows(journal.path, dict([mark])) == [_row(n) for n in range(6, appended)]


def test_a_journal_written_before_the_numbers_is_read_from_its_offsets(tmp_path: Path) -> None:
    """A journal of a process of the earlier version (records of the click alone, an offset in the store):
    read from the larger of the store's offset and its own."""
    records = [click_journal.dumpb(_row(n)) for n in range(3)]
    body = b"".join(len(r).to_bytes(4, "little") + r for r in records) + b"\0\0\0\0"
    first_end = click_journal.HEADER + 4 + len(records[0])
    data = click_journal.HEADER.to_bytes(8, "little") + body
    assert click_journal._records(data) == [_row(n) for n in range(3)]
    assert click_journal._records(data, first_end) == [_row(1), _row(2)]


def test_a_steady_load_keeps_the_file_small(tmp_path: Path) -> None:
    journal = ClickJournal(str(tmp_path / "db"), initial_bytes=4096)
    appended = 0
    for batch in range(200):  # each batch is stored while the next arrives: the journal never empties
        for _ in range(5):
            journal.append(_row(appended))
            appended += 1
        if batch:
            journal.stored(5)
    assert _journal_rows(journal.path) == [_row(n) for n in range(appended - 5, appended)]
    assert journal.path.stat().st_size <= 16384
    journal.close()


def test_the_journal_of_a_killed_process_becomes_a_spill_file_once(tmp_path: Path) -> None:
    database = str(tmp_path / "db")
    mine = ClickJournal(database)  # a live process's journal: never taken
    mine.append(_row(1000))
    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child: three clicks, one of them stored, then killed
        os.close(read)
        journal = ClickJournal(database)
        for n in range(3):
            journal.append(_row(n))
        journal.stored(1)
        os.write(write, b"ready")
        signal.pause()
    os.close(write)
    assert os.read(read, 5) == b"ready"
    os.close(read)
    os.kill(pid, signal.SIGKILL)
    os.waitpid(pid, 0)
    assert recover(database, {}) == 2
    assert recover(database, {}) == 0  # once
    assert [path.name for path in tmp_path.glob("*.journal")] == [mine.name]
    _, rows = click_spill.claim(database)
    assert rows == [_row(1), _row(2)]
    mine.close()


def test_a_spill_file_is_not_claimed_while_it_is_being_written(tmp_path: Path) -> None:
    """Two workers start together: one turns a dead journal into a spill file while the other claims spill files.
    A file claimed half written was read half, then deleted once that half was stored (seen: 481 of 2,086
    clicks lost to a kill -9 and a restart with two workers). A spill file appears whole or not at all."""
    database = str(tmp_path / "svc.db")
    rows = [["acct", f"link-{n}", "x" * 200, n] for n in range(2000)]  # more than a write buffer holds
    seen_while_writing: list[list[object]] = []

    def written() -> Iterator[list[object]]:
        for n, row in enumerate(rows):
            if n == len(rows) // 2:  # the other worker looks for spill files now
                paths, taken = click_spill.claim(database)
                seen_while_writing.extend(taken)
            yield row

    click_spill.spill(database, written())
    assert seen_while_writing == []
    paths, taken = click_spill.claim(database)
    assert taken == rows and len(paths) == 1


def test_what_a_writer_killed_mid_file_left_is_cleared(tmp_path: Path) -> None:
    database = str(tmp_path / "svc.db")
    dead = _dead_pid()
    left = tmp_path / f"svc.db.clicks-{dead}-1{click_spill.SUFFIX}{click_spill.WRITING}"
    left.write_bytes(b'["acct", "link", "half')
    alive = tmp_path / f"svc.db.clicks-{os.getpid()}-2{click_spill.SUFFIX}{click_spill.WRITING}"
    alive.write_bytes(b'["acct", "link"]\n')
    assert click_spill.claim(database) == ([], [])
    assert not left.exists() and alive.exists()  # a file still being written by a living process stays


def _dead_pid() -> int:
    """The pid of a process that has ended (and been reaped)."""
    pid = os.fork()
    if pid == 0:
        os._exit(0)
    os.waitpid(pid, 0)
    return pid
