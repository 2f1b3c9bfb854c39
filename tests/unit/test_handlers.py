"""Handlers, enforced: they parse (the endpoint does), call one service function and shape the reply.

The sources of ``api/`` are read with :mod:`ast`, not imported.

1. A handler never picks a connection or a transaction: no code of ``api/`` reads ``.reader``, ``.background``,
   ``.transaction`` or ``.write`` of anything. The store goes to the services untouched; they choose.
2. A handler (an ``async def`` of ``api/`` whose first parameter is ``request``) makes at most one awaited call
   into the services: a function imported from ``linksvc``, a function of a ``linksvc`` module, or a method of
   a service the application holds (``request.app[KEY].method``). Waking the dispatcher is not awaited.
"""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
STORE_PARTS = {"reader", "background", "transaction", "write", "run_in_writer"}


def modules() -> list[tuple[str, ast.Module]]:
    return [(path.relative_to(ROOT).as_posix(), ast.parse(path.read_text(encoding="utf-8")))
            for path in sorted((ROOT / "api").rglob("*.py"))]


def service_names(tree: ast.Module) -> tuple[set[str], set[str]]:
    """(functions imported from linksvc, linksvc modules imported under a name) of a module."""
    functions: set[str] = set()
    modules_: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module and node.module.split(".")[0] == "linksvc":
            for alias in node.names:
                local = alias.asname or alias.name
                target = f"{node.module}.{alias.name}"
                is_module = (ROOT / Path(*target.split("."))).with_suffix(".py").exists() or \
                    (ROOT / Path(*target.split("."))).is_dir()
                (modules_ if is_module else functions).add(local)
        elif isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name.split(".")[0] == "linksvc":
                    modules_.add(alias.asname or alias.name.split(".")[0])
    return functions, modules_


def is_app_service(node: ast.expr) -> bool:
    """``request.app[KEY]``."""
    return (isinstance(node, ast.Subscript) and isinstance(node.value, ast.Attribute) and node.value.attr == "app"
            and isinstance(node.value.value, ast.Name) and node.value.value.id == "request")


def app_aliases(tree: ast.AST) -> set[str]:
    """Names bound to something the application holds: ``db = request.app[DB]``."""
    return {target.id for node in ast.walk(tree) if isinstance(node, ast.Assign) and is_app_service(node.value)
            for target in node.targets if isinstance(target, ast.Name)}


def is_held(node: ast.expr, aliases: set[str]) -> bool:
    return is_app_service(node) or (isinstance(node, ast.Name) and node.id in aliases)


def service_call(call: ast.Call, functions: set[str], modules_: set[str], aliases: set[str] = frozenset()
                 ) -> str | None:
    func = call.func
    if isinstance(func, ast.Name) and func.id in functions:
        return func.id
    if isinstance(func, ast.Attribute):
        if isinstance(func.value, ast.Name) and func.value.id in modules_:
            return f"{func.value.id}.{func.attr}"
        if is_held(func.value, aliases):
            return f"request.app[...].{func.attr}"
    return None


def handlers(tree: ast.Module) -> list[ast.AsyncFunctionDef]:
    return [node for node in ast.walk(tree) if isinstance(node, ast.AsyncFunctionDef)
            and node.args.args and node.args.args[0].arg == "request"]


def test_handlers_never_pick_a_connection_or_a_transaction() -> None:
    found = [f"{path}:{node.lineno} reads .{node.attr}" for path, tree in modules()
             for aliases in [app_aliases(tree)] for node in ast.walk(tree)
             if isinstance(node, ast.Attribute) and node.attr in STORE_PARTS and is_held(node.value, aliases)]
    assert not found, "api/ chooses connections or transactions; pass the store to a service:\n" + "\n".join(found)


def test_a_handler_makes_one_service_call() -> None:
    found = []
    for path, tree in modules():
        functions, modules_ = service_names(tree)
        for handler in handlers(tree):
            aliases = app_aliases(handler)
            calls = [name for node in ast.walk(handler) if isinstance(node, ast.Await)
                     and isinstance(node.value, ast.Call)
                     and (name := service_call(node.value, functions, modules_, aliases)) is not None]
            if len(calls) > 1:
                found.append(f"{path}:{handler.lineno} {handler.name} awaits {', '.join(calls)}")
    assert not found, "a handler calls one service function:\n" + "\n".join(found)


def test_a_second_service_call_is_seen() -> None:
    tree = ast.parse(
        "from linksvc import accounts\nfrom linksvc.campaigns.catalog import brands\n"
        "async def h(request):\n    await accounts.get_account(1)\n    await brands(2)\n"
        "    await request.app[K].flush()\n    request.app[D].wake()\n    db = request.app[DB]\n"
        "    await db.ping()\n"
    )
    functions, modules_ = service_names(tree)
    handler = handlers(tree)[0]
    calls = [service_call(node.value, functions, modules_, app_aliases(handler)) for node in ast.walk(handler)
             if isinstance(node, ast.Await) and isinstance(node.value, ast.Call)]
    assert calls == ["accounts.get_account", "brands", "request.app[...].flush", "request.app[...].ping"]
