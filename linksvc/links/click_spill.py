"""Clicks that a stop could not write, kept in a file beside the database until the next start writes them.

A clean stop writes the buffered clicks; when the store refuses the write then (locked by another process
past its busy timeout, a full disk), they go to ``<database>.clicks-<pid>-<ns>.spill.jsonl`` instead, one
click a JSON line, synced to disk. A file is written under a name of its own and renamed
when whole, so it is never claimed half written. The next start claims every such file by renaming it (one worker of
several gets each; a file claimed by a process that has died is claimed again), puts its clicks at the head
of the buffer and deletes it once they are stored. Rows are the click tuples of ``linksvc.links.clicks``.
"""

from __future__ import annotations

import contextlib
import os
import time
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

from linksvc.jsoncodec import dumpb, loads
from linksvc.untrusted import safe_text

SUFFIX = ".spill.jsonl"
CLAIMED = ".claimed-"
WRITING = ".writing"  # a spill file being written (claim takes neither it nor, below, what a dead writer left)


def storable(value: Any) -> Any:
    if isinstance(value, str):
        return safe_text(value, 4000)
    if isinstance(value, dict):
        return {safe_text(str(k), 100): safe_text(str(v), 1000) for k, v in value.items()}
    return value


def spill(database: str, rows: Iterable[Sequence[Any]]) -> Path:
    """Writes ``rows`` to a new spill file, synced; it appears under its name whole (written under a name
    :func:`claim` does not take, then renamed), so a worker that claims spill files meanwhile never takes it
    half written."""
    path = Path(f"{database}.clicks-{os.getpid()}-{time.time_ns()}{SUFFIX}")
    writing = path.with_name(path.name + WRITING)
    with writing.open("wb") as out:
        for row in rows:
            with contextlib.suppress(TypeError):  # a row no JSON can hold is one the store refused anyway
                out.write(dumpb([storable(value) for value in row]) + b"\n")
        out.flush()
        os.fsync(out.fileno())
    os.replace(writing, path)
    _sync_folder(path.parent)
    return path


def _sync_folder(folder: Path) -> None:
    """The rename is on disk too (a power cut after it keeps the file under its name)."""
    fd = os.open(folder, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def _claimer_is_gone(path: Path) -> bool:
    pid = path.name.rpartition(CLAIMED)[2]
    if not pid.isdigit():
        return False
    try:
        os.kill(int(pid), 0)
    except ProcessLookupError:
        return True
    except OSError:
        return False
    return int(pid) == os.getpid()


def _writer_is_gone(path: Path, database_name: str) -> bool:
    """Whether the process that was writing ``path`` (its pid is in the name) has died. Its clicks are still in
    the journal or the buffer they were being spilled from (a journal goes only once its spill file is whole),
    so the half-written file can go."""
    pid = path.name.removeprefix(f"{database_name}.clicks-").partition("-")[0]
    if not pid.isdigit():
        return False
    try:
        os.kill(int(pid), 0)
    except ProcessLookupError:
        return True
    except OSError:
        return False
    return False


def claim(database: str) -> tuple[list[Path], list[list[Any]]]:
    """Takes the files earlier runs left and returns them with their rows, oldest first."""
    base = Path(database)
    found = sorted(base.parent.glob(f"{base.name}.clicks-*{SUFFIX}*"))
    for path in found:  # what a writer killed mid-file left: its clicks are still where they came from
        if path.name.endswith(WRITING) and _writer_is_gone(path, base.name):
            path.unlink(missing_ok=True)
    candidates = [p for p in found if p.name.endswith(SUFFIX) or (CLAIMED in p.name and _claimer_is_gone(p))]
    claimed, rows = [], []
    for path in candidates:
        mine = path.with_name(f"{path.name.partition(CLAIMED)[0]}{CLAIMED}{os.getpid()}")
        try:
            path.rename(mine)
        except OSError:  # another worker took it first
            continue
        claimed.append(mine)
        for line in mine.read_bytes().splitlines():
            with contextlib.suppress(ValueError):
                rows.append(loads(line))
    return claimed, rows
