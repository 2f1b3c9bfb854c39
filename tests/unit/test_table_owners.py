"""Every table has one owning storage module, the only one that writes it.

Each module of ``storage/`` declares the tables it owns in ``OWNS`` (empty for the read-only ones). A table is
owned by exactly one module, every table the migrations create has an owner, and no module writes
(``INSERT``, ``INSERT OR ...``, ``REPLACE``, ``UPDATE``, ``DELETE``) a table it does not own. Reading across
modules (a join, a lookup) is fine. The migrations (``storage/migrations/*.sql``, with their triggers) are
exempt.

The write statements are found in the string constants of each module, read with :mod:`ast` (docstrings
aside); an f-string is read with its placeholders kept as ``{expression}``. A statement whose table is such a
placeholder is allowed only in :data:`COMPUTED_TABLE_WRITERS`, the modules that check the name against their own
``OWNS`` at run time. A breach is reported with the module, line and table.
"""

from __future__ import annotations

import ast
import importlib
import re
from collections.abc import Iterator
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
STORAGE = ROOT / "storage"
MIGRATIONS = STORAGE / "migrations"
TABLE = r"(\{[^}]*\}|\w+)"
WRITES = (
    re.compile(rf"\bINSERT (?:OR \w+ )?INTO {TABLE}"),
    re.compile(rf"\bREPLACE INTO {TABLE}"),
    re.compile(rf"\bUPDATE {TABLE} SET\b"),
    re.compile(rf"\bDELETE FROM {TABLE}"),
)
CREATE = re.compile(r"\bCREATE TABLE (?:IF NOT EXISTS )?(\w+)", re.IGNORECASE)
# Modules that write a table named by an expression, each with why that stays within its OWNS.
COMPUTED_TABLE_WRITERS = {
    "storage/conversions.py": "_add_counts and _add_revenue pass the name to _own, which accepts only its OWNS",
    "storage/documents.py": "every table name passes _known/_columns, which accept only TABLES (its OWNS)",
}


def modules() -> list[Path]:
    return sorted(p for p in STORAGE.glob("*.py") if p.name != "__init__.py")


def owns(path: Path) -> tuple[str, ...]:
    module = importlib.import_module(f"storage.{path.stem}")
    declared = getattr(module, "OWNS", None)
    assert isinstance(declared, tuple) and all(isinstance(t, str) for t in declared), (
        f"storage/{path.name} declares no OWNS tuple of table names")
    return declared


def docstrings(tree: ast.AST) -> set[int]:
    found = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)) and node.body:
            first = node.body[0]
            if isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant):
                found.add(id(first.value))
    return found


def strings(source: str) -> Iterator[tuple[int, str]]:
    """(line, text) of every string constant and f-string outside docstrings."""
    tree = ast.parse(source)
    skip = docstrings(tree)
    for node in ast.walk(tree):
        if isinstance(node, ast.JoinedStr):
            parts = []
            for value in node.values:
                skip.add(id(value))
                if isinstance(value, ast.Constant):
                    parts.append(str(value.value))
                elif isinstance(value, ast.FormattedValue):
                    parts.append("{" + ast.unparse(value.value) + "}")
            yield node.lineno, "".join(parts)
        elif isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in skip:
            yield node.lineno, node.value


def writes(source: str) -> Iterator[tuple[int, str]]:
    """(line, table) of every write statement in ``source``."""
    for line, text in strings(source):
        for pattern in WRITES:
            for match in pattern.finditer(text):
                yield line, match.group(1)


# Made by storage.postgres's migration runner itself (the versions applied), not by a migration file.
RUNNER_TABLES = {"schema_migrations"}


DROP = re.compile(r"DROP\s+TABLE\s+(?:IF\s+EXISTS\s+)?([a-z_]+)", re.IGNORECASE)


def migration_tables() -> set[str]:
    """Tables either dialect's migrations create (PostgreSQL's own under ``migrations/postgresql``) and no later
    migration of that dialect drops."""
    found = set(RUNNER_TABLES)
    for folder in (MIGRATIONS, MIGRATIONS / "postgresql"):
        tables: set[str] = set()
        for sql in sorted(folder.glob("*.sql")):
            text = sql.read_text("utf-8")
            made = [(m.start(), m.group(1), True) for m in CREATE.finditer(text)]
            gone = [(m.start(), m.group(1), False) for m in DROP.finditer(text)]
            for _, name, created in sorted(made + gone):  # in the file's order (a table dropped, then made again)
                if created:
                    tables.add(name)
                else:
                    tables.discard(name)
        found |= tables
    return found


def ownership() -> dict[str, list[str]]:
    owners: dict[str, list[str]] = {}
    for path in modules():
        for table in owns(path):
            owners.setdefault(table, []).append(f"storage/{path.name}")
    return owners


def test_the_scanner_finds_writes() -> None:
    source = '''
"""INSERT INTO docstring_only is prose."""
A = "INSERT OR IGNORE INTO a (x) VALUES (?)"
B = ("UPDATE b SET x = ? "
     "WHERE y = ?")
C = f"DELETE FROM {table} WHERE id = ?"
D = f"INSERT INTO d ({', '.join(cols)}) VALUES (?)"
E = "INSERT INTO e (k) VALUES (?) ON CONFLICT (k) DO UPDATE SET k = excluded.k"
F = "REPLACE INTO f (x) VALUES (?)"
G = "SELECT * FROM g JOIN h ON g.id = h.id"
'''
    assert sorted(writes(source)) == [(3, "a"), (4, "b"), (6, "{table}"), (7, "d"), (8, "e"), (9, "f")]


def test_every_table_has_one_owner() -> None:
    owners = ownership()
    shared = {table: names for table, names in owners.items() if len(names) > 1}
    assert not shared, f"tables owned by more than one module: {shared}"
    created = migration_tables()
    assert created, "no CREATE TABLE found in the migrations"
    orphans = sorted(created - set(owners))
    assert not orphans, f"tables created by the migrations that no storage module owns (OWNS): {orphans}"
    unknown = sorted(set(owners) - created)
    assert not unknown, f"OWNS names tables no migration creates: {unknown}"


def test_no_module_writes_a_table_it_does_not_own() -> None:
    breaches = []
    for path in modules():
        name = f"storage/{path.name}"
        mine = set(owns(path))
        for line, table in writes(path.read_text(encoding="utf-8")):
            if table.startswith("{"):
                if name not in COMPUTED_TABLE_WRITERS:
                    breaches.append(f"{name}:{line} writes a computed table {table}")
            elif table not in mine:
                breaches.append(f"{name}:{line} writes {table}, which it does not own")
    assert not breaches, "\n".join(breaches)
