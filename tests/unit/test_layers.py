"""Layers, enforced: ``api/`` (HTTP) calls ``linksvc/`` (services), which calls ``storage/`` (SQLite); never back up,
and never around.

The sources are read, not imported: every ``.py`` file of the three folders is parsed with :mod:`ast` and every
``import`` in it is collected, also those nested in functions and under ``if TYPE_CHECKING:``.

1. No module of ``api/`` imports ``storage``: handlers pass the app's store (``linksvc.store.Store``) to services.
2. No module of ``linksvc/`` imports ``api`` or aiohttp's server (``aiohttp.web``), except the entry points
   that assemble the service (:data:`LINKSVC_ENTRY_POINTS`). aiohttp's client is fine (the forwarding sends).
3. No module of ``storage/`` imports ``api`` or ``linksvc`` (:data:`STORAGE_MAY_IMPORT` is empty today).
4. No SQL text outside ``storage/``: no string constant of ``linksvc/`` or ``api/`` (docstrings aside) looks
   like a statement (:data:`SQL`), transaction control (``BEGIN``, ``COMMIT``, ``ROLLBACK``, ``SAVEPOINT``,
   ``RELEASE``) included: transactions are the store's (``storage/writer.py``).
5. No module of ``linksvc/`` or ``api/`` imports the database drivers (``sqlite3``, ``aiosqlite``), except
   those in :data:`DRIVER_IMPORTS` (none today): the store's errors come as ``linksvc.store.StoreError`` and
   ``StoreOperationalError``. (``bench/`` and ``tests/`` open the file with ``sqlite3`` to look at it from
   outside the service; they are not layers.)

A breach is reported with its file, line and import (or string).
"""

from __future__ import annotations

import ast
import re
from collections.abc import Collection, Iterator
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
LAYERS = ("api", "linksvc", "storage")
# They build the application (routes, app keys, the server): the one place linksvc meets api and aiohttp.web.
LINKSVC_ENTRY_POINTS = {"linksvc/__main__.py", "linksvc/app.py"}
# Modules of linksvc that storage may import, each with why. None today: storage needs no service code.
STORAGE_MAY_IMPORT: dict[str, str] = {}
SQL = re.compile(r"\b(SELECT|INSERT INTO|UPDATE \w+ SET|DELETE FROM|BEGIN|COMMIT|ROLLBACK|SAVEPOINT|RELEASE)\b")
DRIVERS = ("sqlite3", "aiosqlite")
# Modules of linksvc/ or api/ that may import a driver, each with why. None today.
DRIVER_IMPORTS: dict[str, str] = {}


def sources(layer: str) -> list[Path]:
    return sorted((ROOT / layer).rglob("*.py"))


def relative(path: Path) -> str:
    return path.relative_to(ROOT).as_posix()


def imports(tree: ast.AST, package: str) -> Iterator[tuple[int, str]]:
    """(line, dotted name) of every import anywhere in ``tree``; ``from a import b`` gives ``a.b`` (``b`` may be a
    module: ``from aiohttp import web``). ``package``, the file's package, resolves relative imports."""
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                yield node.lineno, alias.name
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                parts = package.split(".")
                parent = parts[:len(parts) - node.level + 1]
                base = ".".join([*parent, base] if base else parent)
            for alias in node.names:
                yield node.lineno, f"{base}.{alias.name}" if alias.name != "*" else base


def package_of(path: Path) -> str:
    return ".".join(path.relative_to(ROOT).parent.parts)


def parsed(layer: str) -> Iterator[tuple[str, str, ast.AST]]:
    for path in sources(layer):
        yield relative(path), package_of(path), ast.parse(path.read_text(encoding="utf-8"), str(path))


def within(name: str, package: str) -> bool:
    return name == package or name.startswith(package + ".")


def breaches(layer: str, refused: tuple[str, ...], allowed: Collection[str] = (),
             exempt: Collection[str] = ()) -> list[str]:
    found = []
    for path, package, tree in parsed(layer):
        if path in exempt:
            continue
        for line, name in imports(tree, package):
            if any(within(name, package) for package in refused) and not any(within(name, a) for a in allowed):
                found.append(f"{path}:{line} imports {name}")
    return found


def aiohttp_server(name: str) -> bool:
    """aiohttp's server side: ``aiohttp.web`` and its ``aiohttp.web_*`` modules."""
    return within(name, "aiohttp.web") or name.startswith("aiohttp.web_")


def test_api_does_not_import_storage() -> None:
    found = breaches("api", ("storage",))
    assert not found, "api/ reaches storage past the services:\n" + "\n".join(found)


def test_linksvc_imports_neither_api_nor_the_http_server() -> None:
    found = breaches("linksvc", ("api",), exempt=LINKSVC_ENTRY_POINTS)
    for path, package, tree in parsed("linksvc"):
        if path in LINKSVC_ENTRY_POINTS:
            continue
        found += [f"{path}:{line} imports {name}" for line, name in imports(tree, package) if aiohttp_server(name)]
        # ``import aiohttp`` (the client) then ``aiohttp.web.…`` reaches the server all the same
        found += [f"{path}:{node.lineno} uses aiohttp.{node.attr}" for node in ast.walk(tree)
                  if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name)
                  and node.value.id == "aiohttp" and aiohttp_server(f"aiohttp.{node.attr}")]
    assert not found, "linksvc/ depends on the HTTP layer:\n" + "\n".join(found)


def test_storage_imports_neither_api_nor_services() -> None:
    found = breaches("storage", ("api", "linksvc"), allowed=set(STORAGE_MAY_IMPORT))
    assert not found, "storage/ reaches up a layer:\n" + "\n".join(found)


def docstrings(tree: ast.AST) -> set[int]:
    """ids of the docstring constants of the module, its classes and functions."""
    found = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Module | ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef) and node.body:
            first = node.body[0]
            if isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant):
                found.add(id(first.value))
    return found


def sql_outside_storage() -> list[str]:
    found: list[tuple[str, int, str]] = []
    for layer in ("api", "linksvc"):
        for path, _, tree in parsed(layer):
            skip = docstrings(tree)
            for node in ast.walk(tree):  # f-strings too: their literal parts are constants
                if (isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in skip
                        and SQL.search(node.value)):
                    found.append((path, node.lineno, f"{path}:{node.lineno} has SQL {node.value[:60]!r}"))
    return [text for _, _, text in sorted(found)]


def test_no_sql_outside_storage() -> None:
    found = sql_outside_storage()
    assert not found, "SQL belongs in storage/ repository functions:\n" + "\n".join(found)


def test_only_storage_imports_the_database_drivers() -> None:
    found = [f for layer in ("api", "linksvc") for f in breaches(layer, DRIVERS, exempt=set(DRIVER_IMPORTS))]
    assert not found, "the database drivers are storage's (use linksvc.store's errors):\n" + "\n".join(found)


@pytest.mark.parametrize("source, expected", [
    ("from storage.db import Database", ["storage.db.Database"]),
    ("def f():\n    import storage.clicks", ["storage.clicks"]),
    ("from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from storage import db",
     ["typing.TYPE_CHECKING", "storage.db"]),
    ("from . import schemas", ["api.storefront.schemas"]),
    ("from ..auth import principal", ["api.auth.principal"]),
])
def test_every_import_is_seen(source: str, expected: list[str]) -> None:
    """Imports anywhere in a module, relative ones resolved (here in a module of the package api.storefront)."""
    assert [name for _, name in imports(ast.parse(source), "api.storefront")] == expected


@pytest.mark.parametrize("text, sql", [
    ("SELECT id FROM links WHERE code = ?", True),
    ("INSERT INTO clicks (id) VALUES (?)", True),
    ("UPDATE links SET body = ?", True),
    ("DELETE FROM links", True),
    ("BEGIN IMMEDIATE", True),
    ("COMMIT", True),
    ("ROLLBACK TO unit_0", True),
    ("SAVEPOINT unit_0", True),
    ("RELEASE unit_0", True),
    ("Begin the batch, then commit it", False),
    ("select one of the campaigns", False),
    ("Update the link", False),
])
def test_sql_is_recognised(text: str, sql: bool) -> None:
    assert bool(SQL.search(text)) is sql
