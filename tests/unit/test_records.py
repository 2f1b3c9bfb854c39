"""Typed records at the storage edge: repositories hand out frozen dataclasses, never ``sqlite3.Row``, and decode
their JSON columns themselves, once.

The sources are read, not imported (as in ``test_layers.py``): every ``storage/*.py`` is parsed with :mod:`ast`.

1. No public function of a repository (a name without a leading underscore, at module level) mentions ``Row`` in
   its return annotation or in a parameter's, and every one has a return annotation (so a row cannot leave
   unannotated).
2. Outside ``storage/``, no ``loads(...)`` is applied to a subscript by a column name (``loads(row["body"])``): a
   JSON column is decoded in the repository that reads it.

The exemptions below name each module or file with why; each entry must still be needed (a stale one fails),
so the lists only shrink.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Iterator
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

# storage.db's fetch_one/fetch_all are the rows' one source inside storage: every repository turns them into records.
ROW_EXEMPT_MODULES = {"db"}
# Single functions of other modules that still return rows, with why. None.
ROW_EXEMPT_FUNCTIONS: set[tuple[str, str]] = set()

# Files outside storage that decode a column of a row, with why: tests that read the tables straight, to check
# what the service stored without going through it.
LOADS_EXEMPT = {
    "tests/http/test_events.py": "event rows read straight from the events table",
    "tests/storage/test_wallet_view.py": "rows read straight from the tables",
    "tests/storage/test_pg_schema.py": "rows read straight from both stores' tables, to compare them",
    "tests/http/test_event_lineage.py": "the conversion rollups' rows read straight from their tables",
}
LOADS_LAYERS = ("linksvc", "api", "bench", "tests")


def repositories() -> Iterator[tuple[str, ast.Module]]:
    for path in sorted((ROOT / "storage").glob("*.py")):
        if path.stem != "__init__":
            yield path.stem, ast.parse(path.read_text(encoding="utf-8"), str(path))


def public_functions(tree: ast.Module) -> Iterator[ast.FunctionDef | ast.AsyncFunctionDef]:
    for node in tree.body:
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef) and not node.name.startswith("_"):
            yield node


def mentions_row(annotation: ast.expr | None) -> bool:
    if annotation is None:
        return False
    for node in ast.walk(annotation):
        if isinstance(node, ast.Name) and node.id == "Row":
            return True
        if isinstance(node, ast.Attribute) and node.attr == "Row":
            return True
        if isinstance(node, ast.Constant) and isinstance(node.value, str) and re.search(r"\bRow\b", node.value):
            return True
    return False


def hands_out_rows(function: ast.FunctionDef | ast.AsyncFunctionDef) -> bool:
    return mentions_row(function.returns) or any(mentions_row(a.annotation) for a in function.args.args)


def row_breaches() -> tuple[list[str], set[tuple[str, str]]]:
    found, exempt_seen = [], set()
    for module, tree in repositories():
        if module in ROW_EXEMPT_MODULES:
            continue
        for function in public_functions(tree):
            where = f"storage/{module}.py:{function.lineno} {function.name}"
            if (module, function.name) in ROW_EXEMPT_FUNCTIONS:
                exempt_seen.add((module, function.name))
                continue
            if function.returns is None:
                found.append(f"{where}: no return annotation")
            elif mentions_row(function.returns):
                found.append(f"{where}: returns {ast.unparse(function.returns)}")
            arguments = [*function.args.posonlyargs, *function.args.args, *function.args.kwonlyargs]
            for argument in arguments:
                if mentions_row(argument.annotation):
                    found.append(f"{where}: takes {argument.arg}: {ast.unparse(argument.annotation)}")
    return found, exempt_seen


def test_no_repository_hands_out_rows() -> None:
    found, _ = row_breaches()
    assert not found, "sqlite3.Row escapes a repository; return a record:\n" + "\n".join(found)


def test_row_exemptions_are_still_needed() -> None:
    _, seen = row_breaches()
    assert seen == ROW_EXEMPT_FUNCTIONS, f"drop from ROW_EXEMPT_FUNCTIONS: {sorted(ROW_EXEMPT_FUNCTIONS - seen)}"
    with_rows = {module for module, tree in repositories() if any(hands_out_rows(f) for f in public_functions(tree))}
    stale = ROW_EXEMPT_MODULES - with_rows
    assert not stale, f"drop from ROW_EXEMPT_MODULES: {sorted(stale)}"


def loads_of_columns(tree: ast.AST) -> Iterator[tuple[int, str]]:
    """``loads(x["name"])`` or ``something.loads(x["name"])``: a JSON column decoded outside its repository."""
    for node in ast.walk(tree):
        if not isinstance(node, ast.Call) or not node.args:
            continue
        func = node.func
        named = (isinstance(func, ast.Name) and func.id == "loads") or (
            isinstance(func, ast.Attribute) and func.attr == "loads")
        argument = node.args[0]
        if named and isinstance(argument, ast.Subscript) and isinstance(argument.slice, ast.Constant) \
                and isinstance(argument.slice.value, str):
            yield node.lineno, ast.unparse(node)


def loads_breaches() -> dict[str, list[str]]:
    found: dict[str, list[str]] = {}
    for layer in LOADS_LAYERS:
        for path in sorted((ROOT / layer).rglob("*.py")):
            tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
            for line, call in loads_of_columns(tree):
                found.setdefault(path.relative_to(ROOT).as_posix(), []).append(f"{line}: {call}")
    return found


def test_json_columns_are_decoded_in_their_repository() -> None:
    found = {path: calls for path, calls in loads_breaches().items() if path not in LOADS_EXEMPT}
    shown = [f"{path}:{call}" for path, calls in found.items() for call in calls]
    assert not shown, "a JSON column decoded outside storage; have its repository return a record:\n" + \
        "\n".join(shown)


def test_loads_exemptions_are_still_needed() -> None:
    stale = set(LOADS_EXEMPT) - set(loads_breaches())
    assert not stale, f"drop from LOADS_EXEMPT: {sorted(stale)}"


def test_the_checks_see_what_they_look_for() -> None:
    tree = ast.parse("async def get(conn) -> Row | None: ...\ndef f(row: 'list[Row]') -> int: ...\n"
                     "x = loads(row['body'])\ny = orjson.loads(stored['payload'])\nz = loads(text)\n")
    functions = list(public_functions(tree))
    assert mentions_row(functions[0].returns)
    assert mentions_row(functions[1].args.args[0].annotation)
    assert not mentions_row(functions[1].returns)
    assert [call for _, call in loads_of_columns(tree)] == ["loads(row['body'])", "orjson.loads(stored['payload'])"]
