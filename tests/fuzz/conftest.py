"""Schemathesis against both OpenAPI documents of the real server (``linksvc serve`` on the demo data): the
storefront's in ``test_storefront.py``, the admin API's in three runs of ``test_admin_*.py`` (tests/fuzz/admin.py),
each against a server of its own (the ``service`` fixture), so that the runs, a minute or more each, go to four
pytest-xdist workers.

Each document is loaded from the running server and every operation in it gets generated requests, valid
and invalid, in schemathesis's coverage, fuzzing and stateful phases (the stateful phase chains operations
through the links schemathesis infers, e.g. a created resource's id into its read, replace and delete).
The requests are authenticated as a client's would be: the storefront with a token of the demo account's
SERVER key, the admin API with the admin token. Every response must pass these checks:

- ``not_a_server_error``: no 5xx for any input;
- ``status_code_conformance``, ``content_type_conformance``, ``response_schema_conformance``: the status
  is documented, and the body is of a documented media type and valid against the documented schema;
- ``error_body_shape`` (``tests/fuzz/checks.py``): every 4xx/5xx JSON body is exactly ``{error, details}``.

Schemathesis runs as its command line (``schemathesis run``), the interface that runs all its phases; its
pytest loader for schemas from fixtures does not work with pytest 9.2 (``Function._nodeid`` is gone).
The run is bounded and reproducible: deterministic generation, a fixed seed, no example database or cache
carried between runs, a few examples per operation, a timeout per request and one for the whole run.
On failure the assertion shows schemathesis's report, with a curl command for each failing request.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.processes import demo_server

REPO_ROOT = Path(__file__).resolve().parents[2]
ADMIN_TOKEN = "fuzz-admin-token-0123456789"
ACCOUNT = "3f6c1a52-8d4e-4b7a-9c21-5e0f7a9b1d01"  # the demo account of fixtures/demo.json
SERVER_KEY = "lk_demo_server_4f8a2c9e7b1d3a5f6c8e0b2d"  # its SERVER key
SEED = 8
MAX_EXAMPLES = 25
RUN_TIMEOUT_SECONDS = 900  # a bound on a hang: the admin run took 58 s alone, 270 s beside three busy workers
CHECKS = ("not_a_server_error", "status_code_conformance", "content_type_conformance",
          "response_schema_conformance", "error_body_shape")


@pytest.fixture
def service(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """A server of its own for each run: one run's generated requests change what a server answers next."""
    with demo_server(tmp_path_factory.mktemp("fuzz-server"), ADMIN_TOKEN,
                     LINKSVC_ALLOW_PRIVATE_DESTINATIONS="1") as base:
        yield base


def _toml(value: Any) -> str:
    """A TOML value; JSON's strings, numbers, booleans and arrays are TOML's too."""
    if isinstance(value, dict):
        return "{ " + ", ".join(f"{json.dumps(k)} = {_toml(v)}" for k, v in value.items()) + " }"
    return json.dumps(value)


def config(auth: dict[str, dict[str, str]], parameters: dict[str, str],
            operations: tuple[dict[str, Any], ...] = ()) -> str:
    lines = [
        f"seed = {SEED}", "workers = 1", "request-timeout = 10", 'suppress-health-check = ["all"]',
        "[cache]", "enabled = false",
        "[generation]", f"max-examples = {MAX_EXAMPLES}", "deterministic = true", 'database = "none"',
        "[checks]", "enabled = false",
    ]
    for check in CHECKS:
        lines += [f"[checks.{check}]", "enabled = true"]
    for scheme, values in auth.items():
        lines += [f"[auth.openapi.{scheme}]"] + [f"{k} = {_toml(v)}" for k, v in values.items()]
    lines += ["[parameters]"] + [f"{_toml(k)} = {_toml(v)}" for k, v in parameters.items()]
    for operation in operations:
        lines += ["[[operations]]"] + [f"{k} = {_toml(v)}" for k, v in operation.items()]
    return "\n".join(lines) + "\n"


def run_schemathesis(base: str, document: str, config: str, tmp: Path, tags: tuple[str, ...] = ()) -> None:
    """One ``schemathesis run`` of ``document``; ``tags``: only the operations of these tags (all when empty)."""
    config_path = tmp / "schemathesis.toml"
    config_path.write_text(config)
    env = {**os.environ, "SCHEMATHESIS_HOOKS": "tests.fuzz.checks",
           "PYTHONPATH": os.pathsep.join(filter(None, [str(REPO_ROOT), os.environ.get("PYTHONPATH")])),
           "NO_COLOR": "1", "COLUMNS": "120"}
    result = subprocess.run(
        [sys.executable, "-m", "schemathesis.cli", "--config-file", str(config_path), "run",
         *(f"--include-tag={tag}" for tag in tags), base + document],
        cwd=tmp, env=env, capture_output=True, text=True, timeout=RUN_TIMEOUT_SECONDS,
    )
    report = result.stdout + result.stderr
    assert result.returncode == 0, report[report.find("FAILURES"):] if "FAILURES" in report else report
    assert " passed" in report and "Tested:" in report, report
