"""``linksvc import VENDOR FILE --account ID``: the same import as the admin API's, on the command line: a dry
run that writes nothing, then the import, a row per line and a summary; a row that fails is named and makes the
exit status 1 while the others are imported; a file that is not the vendor's export is refused whole."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from tests.factories import A, two_accounts
from tests.processes import ServiceStore

KUTT = Path(__file__).resolve().parents[2] / "fixtures" / "imports" / "kutt.json"


def linksvc(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "linksvc", *args], capture_output=True, text=True, timeout=60,
                          check=False)


def test_an_export_is_planned_imported_and_answered_on_the_command_line(tmp_path: Path, store: ServiceStore) -> None:
    (tmp_path / "seed.json").write_text(json.dumps(two_accounts()))
    assert linksvc("seed", str(tmp_path / "seed.json"), *store.args()).returncode == 0
    where = ("--account", A, *store.args())

    plan = linksvc("import", "kutt", str(KUTT), "--dry-run", *where)
    assert plan.returncode == 0, plan.stderr
    assert plan.stdout.splitlines() == [
        "row 1: would be created launch -> https://shop.example/launch?utm_source=kutt&utm_medium=link"
        "&utm_campaign=launch",
        "row 2: would be created returns -> https://shop.example/returns",
        "dry run: 2 rows: 2 to create, 0 skipped, 0 failed"]
    assert linksvc("route", "launch", *store.args()).returncode == 1  # nothing written

    done = linksvc("import", "kutt", str(KUTT), *where)
    assert done.returncode == 0 and done.stdout.splitlines()[-1] == "2 rows: 2 created, 0 skipped, 0 failed"
    route = linksvc("route", "launch", *store.args())
    assert route.returncode == 0 and route.stdout.splitlines()[1].startswith(
        "Location: https://shop.example/launch?utm_source=kutt&utm_medium=link&utm_campaign=launch&tracking_id=")

    mixed = tmp_path / "mixed.json"
    mixed.write_text(json.dumps({"data": [{"address": "launch", "target": "https://shop.example/launch"},
                                          {"address": "new-one", "target": "javascript:alert(1)"},
                                          {"address": "fine-one", "target": "https://shop.example/fine"}]}))
    partial = linksvc("import", "kutt", str(mixed), "--json", *where)
    assert partial.returncode == 1
    answer = json.loads(partial.stdout)
    assert [row["status"] for row in answer["rows"]] == ["skipped", "error", "created"]
    assert answer["rows"][1]["details"]["field"] == "destination_url"

    wrong = linksvc("import", "yourls", str(KUTT), *where)
    assert wrong.returncode == 1 and "is not a YOURLS export" in wrong.stderr and wrong.stdout == ""
    nobody = linksvc("import", "kutt", str(KUTT), "--account", "cccccccc-0000-4000-8000-000000000003",
                     *store.args())
    assert nobody.returncode == 1 and "Account not found" in nobody.stderr
