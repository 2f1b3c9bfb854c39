"""The click journal (linksvc.links.click_journal): what a process killed with clicks unwritten leaves, read
back from the file alone, in order, without the clicks the store already holds; a live process's journal is
never taken; the file stays bounded under a steady load."""

from __future__ import annotations

import os
import signal
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
