"""Clicks answered but not yet stored, kept where a killed process cannot lose them: a file mapped into memory.

A redirect is answered before its click is written (:mod:`linksvc.links.clicks` writes them in batches), so a
process killed outright (``kill -9``, the out-of-memory killer) would lose the clicks it buffered. Each click
is therefore also appended, as a JSON line of its tuple, to ``<database>.clicks-<host>-<pid>-<ns>.journal``, a file
this process maps into memory: an append is a copy into memory, no system call, and the bytes belong to the
kernel's page cache the moment they are copied, so they outlive the process (not a power cut: a machine that
loses power loses the last half second of clicks, as it would lose the buffer).

Layout: 8 bytes, the offset up to which every click is stored; then records, each a 4-byte length and the JSON
of ``[n, *click]``, followed by a zero length that ends them. ``n`` numbers the journal's clicks from 1 and never
goes back, whatever the file does (it starts again from the top, its records move up): the store's
``click_journals`` notes, in the same transaction as the clicks, the number of the last click written, so a kill
between that commit and the offset's move skips them all the same, and a number noted before the records moved
still names the same clicks. (An offset noted in the store would not: it was compared with offsets taken after
the file had started again from the top, and the clicks between were lost to a kill.) A record is written
before the length that makes it visible, so a record is whole or absent. Journals written before the numbers
(records of the click alone) are read from the larger of the two offsets, as they were written. Once a batch is
stored the offset moves past it; when every click is stored the journal starts again from the top; when the file is
full, what is not stored yet moves to the top if it fits there, else the file doubles. The owner holds an
``flock`` on the file for its life; the kernel lets it go when the process dies, however it dies.

At start, and every few seconds after (a process still dying at the start holds its lock a moment longer),
(:func:`recover`) every journal of the database that no living process holds is read from its offset to its
end and turned into a spill file (:mod:`linksvc.links.click_spill`, synced to disk), which the start then
writes as it does any spill; the journal is deleted. A clean stop deletes its journal.

The journal's name carries the machine's name (:data:`NODE`): several nodes on one PostgreSQL database share
``click_journals``, and a node forgets the marks of its own machine's journals only (:func:`is_local`), never
those of a journal that lives on another machine.
"""

from __future__ import annotations

import contextlib
import fcntl
import logging
import mmap
import os
import re
import socket
import time
from collections import deque
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from linksvc.jsoncodec import dumpb, loads
from linksvc.links import click_spill

log = logging.getLogger("linksvc.clicks")

SUFFIX = ".journal"
HEADER = 8
_LENGTH = 4
_END = b"\0\0\0\0"
NODE = re.sub(r"[^A-Za-z0-9]+", "_", socket.gethostname()) or "node"  # this machine, as journal names carry it
INITIAL_BYTES = 1 << 22  # 4 MiB, about 8,000 clicks; the file doubles when a backlog needs more


class ClickJournal:
    """This process's journal: :meth:`append` each click as it is buffered, :meth:`stored` as batches are
    written (oldest first), :meth:`close` at a clean stop."""

    def __init__(self, database: str, initial_bytes: int = INITIAL_BYTES) -> None:
        self.path = Path(f"{database}.clicks-{NODE}-{os.getpid()}-{time.time_ns()}{SUFFIX}")
        self._fd = os.open(self.path, os.O_RDWR | os.O_CREAT | os.O_EXCL, 0o600)
        fcntl.flock(self._fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        os.ftruncate(self._fd, initial_bytes)
        self._map = mmap.mmap(self._fd, initial_bytes)
        self._end = HEADER  # where the next record goes
        self._ends: deque[int] = deque()  # the end of each record not yet stored, oldest first
        self._numbers: deque[int] = deque()  # and its number, in step with _ends
        self._appended = 0  # the number of the last record appended
        self._set_stored(HEADER)
        self._map[HEADER:HEADER + _LENGTH] = _END

    def append(self, row: Sequence[Any]) -> None:
        number = self._appended + 1
        try:
            data = dumpb([number, *row])
        except TypeError:  # text no JSON can hold (a lone surrogate): kept as the spill file keeps it
            data = dumpb([number, *(click_spill.storable(value) for value in row)])
        start = self._end
        end = start + _LENGTH + len(data)
        if end + _LENGTH > len(self._map):
            self._compact()
            start = self._end
            end = start + _LENGTH + len(data)
            if end + _LENGTH > len(self._map):
                self._grow(end + _LENGTH)
        view = self._map
        view[start + _LENGTH:end] = data
        view[end:end + _LENGTH] = _END
        view[start:start + _LENGTH] = len(data).to_bytes(_LENGTH, "little")  # now the record is visible
        self._end = end
        self._ends.append(end)
        self._numbers.append(number)
        self._appended = number

    def forget_oldest(self) -> None:
        """The buffer dropped its oldest click unstored: it stays in the journal (a restart after a kill
        writes it after all), but no batch will report it stored."""
        if self._ends:
            self._ends.popleft()
            self._numbers.popleft()

    @property
    def name(self) -> str:
        return self.path.name

    def mark_after(self, count: int) -> tuple[str, int] | None:
        """(this journal's name, the number of the last of its oldest ``count`` clicks): what the store notes
        with those clicks; None when they hold no click of the journal."""
        if count <= 0 or not self._numbers:
            return None
        return self.name, self._numbers[min(count, len(self._numbers)) - 1]

    def stored(self, count: int) -> None:
        """The oldest ``count`` clicks appended are stored."""
        if count <= 0 or not self._ends:
            return
        count = min(count, len(self._ends))
        for _ in range(count - 1):
            self._ends.popleft()
            self._numbers.popleft()
        last = self._ends.popleft()
        self._numbers.popleft()
        if self._ends:
            self._set_stored(last)
        else:  # everything is stored: start again from the top
            self._map[HEADER:HEADER + _LENGTH] = _END
            self._set_stored(HEADER)
            self._end = HEADER

    def close(self) -> None:
        """At a clean stop, once every click is stored or spilled: the journal goes."""
        with contextlib.suppress(OSError, ValueError):
            self._map.close()
        with contextlib.suppress(OSError):
            os.close(self._fd)
        self.path.unlink(missing_ok=True)

    def _set_stored(self, offset: int) -> None:
        self._map[0:HEADER] = offset.to_bytes(HEADER, "little")

    def _stored_offset(self) -> int:
        return int.from_bytes(self._map[0:HEADER], "little")

    def _compact(self) -> None:
        """Moves what is not stored yet to the top, when it fits below where it is now: the copy is made and
        ended first, then the offset points at it, so a kill at any moment leaves one whole copy to read."""
        stored = self._stored_offset()
        size = self._end - stored
        if stored - HEADER < size + _LENGTH:  # the copy would overlap the original: grow instead
            return
        view = self._map
        view[HEADER:HEADER + size] = view[stored:self._end]
        view[HEADER + size:HEADER + size + _LENGTH] = _END
        self._set_stored(HEADER)
        shift = stored - HEADER
        self._ends = deque(end - shift for end in self._ends)
        self._end = HEADER + size

    def _grow(self, needed: int) -> None:
        size = len(self._map)
        while size < needed:
            size *= 2
        os.ftruncate(self._fd, size)
        self._map.resize(size)


def _numbered(row: list[Any]) -> bool:
    return bool(row) and isinstance(row[0], int) and not isinstance(row[0], bool)


def _records(data: bytes, stored: int = 0) -> list[list[Any]]:
    """The clicks a journal holds after its stored offset, up to its end marker (or a record cut short),
    without those numbered up to ``stored`` (what the store says it holds). A journal written before the
    numbers: ``stored`` is an offset, and reading starts from the larger of it and the journal's own."""
    if len(data) < HEADER:
        return []
    own = int.from_bytes(data[:HEADER], "little")
    found = _records_by_offset(data, own)
    if found and not _numbered(found[0]):  # written before the numbers
        return _records_by_offset(data, max(own, stored))
    return [row[1:] for row in found if _numbered(row) and row[0] > stored]


def _records_by_offset(data: bytes, at: int) -> list[list[Any]]:
    rows: list[list[Any]] = []
    while at >= HEADER and at + _LENGTH <= len(data):
        length = int.from_bytes(data[at:at + _LENGTH], "little")
        if length == 0 or at + _LENGTH + length > len(data):
            break
        with contextlib.suppress(ValueError):
            row = loads(data[at + _LENGTH:at + _LENGTH + length])
            if isinstance(row, list):
                rows.append(row)
        at += _LENGTH + length
    return rows


def journal_names(database: str) -> set[str]:
    """The journals of ``database`` on disk, by name."""
    base = Path(database)
    return {path.name for path in base.parent.glob(f"{base.name}.clicks-*{SUFFIX}")}


def is_local(name: str, database: str) -> bool:
    """Whether the journal ``name`` (a mark in ``click_journals``) is one of this machine's."""
    return name.startswith(f"{Path(database).name}.clicks-{NODE}-")


def recover(database: str, marks: dict[str, int]) -> int:
    """Turns the journals of processes that died into spill files, each from the offset ``marks`` (what the
    store holds, by journal name) or its own header says is stored; returns how many clicks they held."""
    base = Path(database)
    found = 0
    for path in sorted(base.parent.glob(f"{base.name}.clicks-*{SUFFIX}")):
        try:
            fd = os.open(path, os.O_RDWR)
        except OSError:  # another worker took it first
            continue
        try:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except OSError:  # its process is alive
                continue
            if not path.exists():  # recovered and deleted by another worker meanwhile
                continue
            with open(fd, "rb", closefd=False) as journal:
                rows = _records(journal.read(), marks.get(path.name, 0))
            if rows:
                click_spill.spill(database, rows)
                found += len(rows)
            path.unlink(missing_ok=True)
        finally:
            os.close(fd)
    if found:
        log.warning("%d clicks of a process that stopped without writing them were recovered from its journal", found)
    return found
