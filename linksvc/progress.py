"""Progress of long command-line work (``linksvc seed``, ``linksvc export``, migrations of an existing database).

The work reports to a :class:`Progress`: a ``stage`` (what it is doing and how many units it will do) and
``advance`` (units done). Where it is shown depends on stderr, so that stdout keeps only the command's result:

- stderr is a terminal: a bar drawn by ``rich`` (description, bar, done/total, percentage, elapsed and
  remaining time), redrawn in place;
- otherwise (a pipe, a file, a CI log): one plain line every ``interval`` seconds (``LINKSVC_PROGRESS_SECONDS``,
  5 by default), written by a thread so that a single long step (an index built by a migration) still shows
  the time going by, and a last line with the totals once any line was written. Work done within the first
  interval writes nothing.

Nothing is drawn or written before the work's first stage, so a command with nothing long to do (no
migration pending) shows nothing.

The services only see the :class:`Progress` protocol; :data:`SILENT` is the default that shows nothing.
"""

from __future__ import annotations

import logging
import sys
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Protocol, TextIO

DEFAULT_INTERVAL_SECONDS = 5.0


class Progress(Protocol):
    def stage(self, description: str, total: int | None, unit: str) -> None:
        """A new stage: what is done and how many ``unit`` it counts (None: not known)."""

    def advance(self, amount: int = 1) -> None:
        """``amount`` more units of the current stage are done."""


class _Silent:
    def stage(self, description: str, total: int | None, unit: str) -> None:
        pass

    def advance(self, amount: int = 1) -> None:
        pass


SILENT: Progress = _Silent()


def _count(number: int) -> str:
    return f"{number:,}"


class PlainLines:
    """A line to ``stream`` every ``interval`` seconds while the work runs, and a last one when any was written."""

    def __init__(self, stream: TextIO, interval: float) -> None:
        self.stream = stream
        self.interval = interval
        self.description = ""
        self.unit = ""
        self.total: int | None = None
        self.done = 0
        self.lines = 0
        self._started = self._stage_started = time.monotonic()
        self._stop = threading.Event()
        self._lock = threading.Lock()
        self._thread = threading.Thread(target=self._tick, name="progress-lines", daemon=True)

    def stage(self, description: str, total: int | None, unit: str) -> None:
        with self._lock:
            self.description, self.total, self.unit, self.done = description, total, unit, 0
            self._stage_started = time.monotonic()
        if not self._thread.is_alive() and not self._stop.is_set():
            self._thread.start()

    def advance(self, amount: int = 1) -> None:
        with self._lock:
            self.done += amount

    def line(self) -> str:
        with self._lock:
            done, total = self.done, self.total
            elapsed = time.monotonic() - self._stage_started
            if total:
                counted = f": {_count(done)} of {_count(total)} {self.unit} ({100 * done // total}%)"
            elif done:
                counted = f": {_count(done)} {self.unit}"
            else:  # a stage that counts nothing (reading a file): the time going by says it is alive
                counted = ""
            return f"{self.description}{counted}, {elapsed:.0f} s"

    def _write(self, text: str) -> None:
        self.stream.write(text + "\n")
        self.stream.flush()
        self.lines += 1

    def _tick(self) -> None:
        while not self._stop.wait(self.interval):
            self._write(self.line())

    def finish(self, failed: bool) -> None:
        self._stop.set()
        if self._thread.is_alive():
            self._thread.join()
        if self.lines and not failed:
            self._write(f"{self.description}: done, {_count(self.done)} {self.unit} in "
                        f"{time.monotonic() - self._started:.1f} s")


class Bar:
    """A ``rich`` progress bar on a terminal; one task, renamed and reset at each stage."""

    def __init__(self, stream: TextIO) -> None:
        from rich.console import Console
        from rich.progress import (
            BarColumn,
            MofNCompleteColumn,
            TaskProgressColumn,
            TextColumn,
            TimeElapsedColumn,
            TimeRemainingColumn,
        )
        from rich.progress import Progress as RichProgress
        from rich.table import Column

        # Fits 80 columns: a long description is cut short and the bar takes what is left.
        self._progress = RichProgress(
            TextColumn("{task.description}", table_column=Column(max_width=28, no_wrap=True, overflow="ellipsis")),
            BarColumn(bar_width=None), MofNCompleteColumn(), TaskProgressColumn(), TimeElapsedColumn(),
            TimeRemainingColumn(), console=Console(file=stream), transient=False, redirect_stdout=False,
            redirect_stderr=True,
        )
        self._stream = stream
        self._task = self._progress.add_task("", total=None, unit="")
        self._started = False
        self._moved: list[logging.StreamHandler[TextIO]] = []

    def stage(self, description: str, total: int | None, unit: str) -> None:
        self._progress.reset(self._task, total=total, completed=0, description=description, unit=unit)
        if not self._started:  # drawn from the first stage on: a command with nothing long to do draws nothing
            self._started = True
            self._progress.start()
            # rich now stands a proxy in for sys.stderr that prints above the bar; log lines go through it
            # instead of being written into the bar's line.
            if sys.stderr is not self._stream:
                for handler in logging.getLogger().handlers:
                    if isinstance(handler, logging.StreamHandler) and handler.stream is self._stream:
                        handler.setStream(sys.stderr)
                        self._moved.append(handler)

    def advance(self, amount: int = 1) -> None:
        self._progress.advance(self._task, amount)

    def finish(self, failed: bool) -> None:
        if self._started:
            for handler in self._moved:
                handler.setStream(self._stream)
            self._progress.stop()


@contextmanager
def shown(stream: TextIO | None = None, interval: float = DEFAULT_INTERVAL_SECONDS) -> Iterator[Progress]:
    """A :class:`Progress` shown on ``stream`` (stderr by default): a bar on a terminal, plain lines otherwise."""
    out = sys.stderr if stream is None else stream
    reporter: Bar | PlainLines = Bar(out) if out.isatty() else PlainLines(out, interval)
    failed = True
    try:
        yield reporter
        failed = False
    finally:
        reporter.finish(failed)
