"""docs/benchmarks.md: the machine description and each benchmark's own section between markers.

A benchmark rewrites only the text between ``<!-- bench:NAME -->`` and ``<!-- /bench:NAME -->``; other
sections and the introduction are kept, and a missing section is appended.
"""

from __future__ import annotations

import hashlib
import json
import os
import platform
import re
import sqlite3
import subprocess
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from importlib.metadata import version
from pathlib import Path
from typing import Any

from linksvc.settings import REPO_ROOT
from storage.db import migration_files

DOC = REPO_ROOT / "docs" / "benchmarks.md"
INTRO = """# Benchmarks

Figures measured on the project's 2-core machines (each section names the CPU model, cores, Python
version and date of its run); each benchmark runs with one command; every figure has its baseline from the
same run: a bare aiohttp handler returning a fixed small JSON body, in its own process, under the same load
settings, since these machines are noisy. Benchmarks live in `bench/`, talk only to 127.0.0.1, stop by
themselves, and are not part of the test suite. Each rewrites only its own section of this file.
"""


@dataclass(frozen=True)
class Machine:
    cpu: str
    cores: int
    python: str
    system: str
    sqlite: str
    aiohttp: str
    wrk: str
    date: str

    def line(self) -> str:
        return (f"{self.cpu}, {self.cores} cores; {self.system}; Python {self.python}, SQLite {self.sqlite}, "
                f"aiohttp {self.aiohttp}, wrk {self.wrk}; {self.date}")


def _cpu_model() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown CPU"


def _wrk_version() -> str:
    try:
        out = subprocess.run(["wrk", "--version"], capture_output=True, text=True, timeout=10)
    except (OSError, subprocess.TimeoutExpired):
        return "not installed"
    match = re.search(r"wrk (\S+)", out.stdout + out.stderr)
    return match.group(1) if match else "unknown"


def machine() -> Machine:
    return Machine(
        cpu=_cpu_model(), cores=os.cpu_count() or 0, python=platform.python_version(),
        system=f"{platform.system()} {platform.release()}", sqlite=sqlite3.sqlite_version,
        aiohttp=version("aiohttp"), wrk=_wrk_version(),
        date=datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC"),
    )


def revision() -> str:
    """The commit measured, and the files of the work tree that differ from it (uncommitted work)."""
    def git(*args: str) -> str:
        try:
            out = subprocess.run(["git", *args], cwd=REPO_ROOT, capture_output=True, text=True, timeout=30)
        except (OSError, subprocess.TimeoutExpired):
            return ""
        # Only trailing newlines go: `git status --porcelain` lines start with meaningful spaces.
        return out.stdout.rstrip("\n") if out.returncode == 0 else ""

    commit, subject = (git("log", "-1", "--format=%h%n%s") or "unknown\n").split("\n", 1)
    if len(subject) > 72:
        subject = subject[:72].rsplit(" ", 1)[0].rstrip(",;:") + " …"
    changed = [line[3:] for line in git("status", "--porcelain", "--untracked-files=all").splitlines()
               if not line[3:].startswith(("bench/", "docs/benchmarks.md", "tests/"))]
    return f"commit {commit} ({subject})" + (f", with uncommitted changes to {', '.join(changed)}" if changed else "")


def markers(name: str) -> tuple[str, str]:
    return f"<!-- bench:{name} -->", f"<!-- /bench:{name} -->"


def replace_section(text: str, name: str, body: str) -> str:
    """``text`` with section ``name`` set to ``body`` (appended when absent)."""
    start, end = markers(name)
    section = f"{start}\n{body.strip()}\n{end}"
    pattern = re.compile(re.escape(start) + r".*?" + re.escape(end), re.DOTALL)
    if pattern.search(text):
        return pattern.sub(lambda _: section, text, count=1)
    return text.rstrip("\n") + "\n\n" + section + "\n"


def write_section(name: str, body: str, doc: Path = DOC) -> Path:
    text = doc.read_text(encoding="utf-8") if doc.is_file() else INTRO
    doc.parent.mkdir(parents=True, exist_ok=True)
    doc.write_text(replace_section(text, name, body), encoding="utf-8")
    return doc


def table(header: list[str], rows: list[list[str]]) -> str:
    lines = ["| " + " | ".join(header) + " |", "|" + "|".join("---" for _ in header) + "|"]
    lines += ["| " + " | ".join(row) + " |" for row in rows]
    return "\n".join(lines)


def schema_digest() -> str:
    """A digest of the migration files: a cached benchmark database is rebuilt when any of them changes."""
    digest = hashlib.sha256()
    for number, path in migration_files():
        digest.update(f"{number}:".encode() + path.read_bytes())
    return digest.hexdigest()[:16]


def count(conn: sqlite3.Connection, sql: str, *params: Any) -> int:
    """The single number a query answers."""
    return int(conn.execute(sql, params).fetchone()[0])


def cached_counts(path: Path, version: int, seed: int, queries: Sequence[tuple[str, tuple[Any, ...]]]
                  ) -> tuple[dict[str, Any], tuple[int, ...]] | None:
    """A cached benchmark database's metadata and row counts, when it was built by this generator
    version and seed against the current migrations; None when it must be built again."""
    meta_file = path.with_suffix(".json")
    if not path.is_file() or not meta_file.is_file():
        return None
    meta: dict[str, Any] = json.loads(meta_file.read_text())
    if (meta.get("version"), meta.get("seed"), meta.get("schema")) != (version, seed, schema_digest()):
        return None
    conn = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    try:
        if count(conn, "PRAGMA user_version") != len(migration_files()):
            return None
        return meta, tuple(count(conn, sql, *params) for sql, params in queries)
    finally:
        conn.close()
