"""Packaging truth: every third-party module the sources use is declared in pyproject.toml, in the group that
installs it where it is used.

The sources are read, not imported: each ``.py`` file is parsed with :mod:`ast` and the top-level names of its
``import`` statements are collected (with two uses that are not ``import`` statements: a package whose data
is read with ``importlib.resources.files("name")``, and a module run as ``[sys.executable, "-m", "name"]``).
Standard-library and first-party names are left out; the rest are mapped to distributions with
:func:`importlib.metadata.packages_distributions`. What ``linksvc/``, ``api/`` and ``storage/`` use must be a
runtime dependency (``pip install .`` is all a server gets); ``tests/`` may also use the ``test`` extra and
``bench/`` the ``bench`` extra.
"""

from __future__ import annotations

import ast
import re
import sys
import tomllib
from collections.abc import Iterator
from importlib.metadata import packages_distributions
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
FIRST_PARTY = {"linksvc", "api", "storage", "bench", "tests"}
# Each source folder and the dependency groups it may use ("runtime" is [project] dependencies).
GROUPS = {
    "linksvc": ("runtime",),
    "api": ("runtime",),
    "storage": ("runtime",),
    "tests": ("runtime", "test"),
    "bench": ("runtime", "bench"),
}
# Imports inside ``try: ... except ImportError`` that need not be declared: (folder, module) -> why the code
# works without it. Empty today; a guarded import of an undeclared distribution fails until it is named here.
OPTIONAL: dict[tuple[str, str], str] = {}


def canonical(name: str) -> str:
    """A distribution name as PEP 503 compares them: ``PyYAML``, ``pyyaml`` and ``py_yaml``-style spellings alike."""
    return re.sub(r"[-_.]+", "-", name).lower()


def requirement_name(requirement: str) -> str:
    match = re.match(r"\s*([A-Za-z0-9][A-Za-z0-9._-]*)", requirement)
    assert match, f"cannot read a distribution name in {requirement!r}"
    return canonical(match.group(1))


def declared() -> dict[str, set[str]]:
    """Distribution names by group: ``runtime`` and each optional-dependency extra."""
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    groups = {"runtime": {requirement_name(r) for r in project.get("dependencies", [])}}
    for extra, requirements in project.get("optional-dependencies", {}).items():
        groups[extra] = {requirement_name(r) for r in requirements}
    return groups


def _catches_import_error(handler: ast.ExceptHandler) -> bool:
    names = handler.type.elts if isinstance(handler.type, ast.Tuple) else [handler.type]
    return any(isinstance(n, ast.Name) and n.id in {"ImportError", "ModuleNotFoundError"} for n in names)


def _string(node: ast.AST) -> str | None:
    return node.value if isinstance(node, ast.Constant) and isinstance(node.value, str) else None


class Uses(ast.NodeVisitor):
    """Top-level module names a file uses: (name, line, guarded by ``except ImportError``)."""

    def __init__(self) -> None:
        self.found: list[tuple[str, int, bool]] = []
        self._guarded = 0

    def visit_Try(self, node: ast.Try) -> None:
        guarded = any(_catches_import_error(h) for h in node.handlers)
        self._guarded += guarded
        for statement in node.body:
            self.visit(statement)
        self._guarded -= guarded
        for part in (*node.handlers, *node.orelse, *node.finalbody):
            self.visit(part)

    def _add(self, module: str, node: ast.AST) -> None:
        self.found.append((module.split(".")[0], getattr(node, "lineno", 0), self._guarded > 0))

    def visit_Import(self, node: ast.Import) -> None:
        for alias in node.names:
            self._add(alias.name, node)

    def visit_ImportFrom(self, node: ast.ImportFrom) -> None:
        if node.level == 0 and node.module:
            self._add(node.module, node)

    def visit_Call(self, node: ast.Call) -> None:
        # importlib.resources.files("package"): the package must be installed as surely as an import.
        name = node.func.attr if isinstance(node.func, ast.Attribute) else getattr(node.func, "id", "")
        if name == "files" and node.args and (package := _string(node.args[0])):
            self._add(package, node)
        self.generic_visit(node)

    def visit_List(self, node: ast.List) -> None:
        # [sys.executable, "-m", "module", ...]: a module run as a program.
        items = [_string(e) for e in node.elts]
        for flag, module in zip(items, items[1:], strict=False):
            if flag == "-m" and module:
                self._add(module, node)
        self.generic_visit(node)


def uses(folder: str) -> Iterator[tuple[str, Path, int, bool]]:
    """Third-party top-level module names used under ``folder``: (module, file, line, guarded)."""
    for path in sorted((ROOT / folder).rglob("*.py")):
        visitor = Uses()
        visitor.visit(ast.parse(path.read_text(encoding="utf-8"), filename=str(path)))
        for module, line, guarded in visitor.found:
            if module not in sys.stdlib_module_names and module not in FIRST_PARTY and module != "__future__":
                yield module, path.relative_to(ROOT), line, guarded


def _bare(name: str) -> str:
    return re.sub(r"[^a-z0-9]", "", name.lower())


def undeclared(folder: str, groups: dict[str, set[str]]) -> list[str]:
    allowed = set().union(*(groups.get(g, set()) for g in GROUPS[folder]))
    distributions = packages_distributions()
    problems = []
    for module, path, line, guarded in uses(folder):
        names = {canonical(d) for d in distributions.get(module, [])}
        if names & allowed or (guarded and (folder, module) in OPTIONAL):
            continue
        where = f"{path}:{line}"
        if not names:
            # Not installed here (an extra this environment did not install, such as bench's): only its name
            # can say which declared distribution provides it (crawleruseragents: crawler-user-agents).
            if any(_bare(name) == _bare(module) for name in allowed):
                continue
            problems.append(f"{where}: {module!r} is not installed and no declared distribution has its name; "
                            f"install it and declare its distribution")
        else:
            wanted = " or ".join(f"[{g}]" if g == "runtime" else f"the {g!r} extra" for g in GROUPS[folder])
            problems.append(f"{where}: {module!r} comes from {', '.join(sorted(names))}, not declared in {wanted}")
    return problems


@pytest.mark.parametrize("folder", sorted(GROUPS))
def test_every_third_party_import_is_declared_where_it_is_used(folder: str) -> None:
    problems = undeclared(folder, declared())
    assert not problems, "undeclared in pyproject.toml:\n" + "\n".join(problems)


def test_the_walk_finds_imports_resources_and_modules_run_as_programs() -> None:
    source = (
        "import yarl.abc\nfrom aiohttp import web\nfrom . import sibling\nimport json\n"
        "try:\n    import optional_thing\nexcept ImportError:\n    optional_thing = None\n"
        "resources.files('crawleruseragents')\nrun([sys.executable, '-m', 'moto.server', '-p', '0'])\n"
    )
    visitor = Uses()
    visitor.visit(ast.parse(source))
    assert visitor.found == [("yarl", 1, False), ("aiohttp", 2, False), ("json", 4, False),
                             ("optional_thing", 6, True), ("crawleruseragents", 9, False), ("moto", 10, False)]


def test_an_undeclared_import_is_named_with_its_file_and_distribution() -> None:
    groups = declared()
    without_yarl = {**groups, "runtime": groups["runtime"] - {"yarl"}}
    problems = undeclared("linksvc", without_yarl)
    assert problems and all("'yarl' comes from yarl, not declared in [runtime]" in p for p in problems), problems
    assert any(p.startswith("linksvc/") for p in problems)


def test_a_wrong_bench_declaration_is_caught_with_or_without_the_extra_installed() -> None:
    groups = declared()
    assert not undeclared("bench", groups)
    with_other_name = {**groups, "bench": {"crawler-agents"}}
    assert [p for p in undeclared("bench", with_other_name) if "crawleruseragents" in p]


def test_every_source_folder_has_its_groups() -> None:
    groups = declared()
    missing = {g for needed in GROUPS.values() for g in needed} - set(groups)
    assert not missing, f"pyproject.toml has no {sorted(missing)} dependency group"
