"""``max_clicks`` held by ``linksvc serve --workers 2`` (issue 34): two processes answer the link, neither reads
the store on the click path, and together they let through the limit and at most the clicks the other worker
took before its count was read back (docs/decisions.md, "Link lifecycle and passwords (issue 34)")."""

from __future__ import annotations

import http.client
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

from tests.factories import ADMIN_TOKEN, A, two_accounts
from tests.processes import ServiceStore, children, free_port, ready, serve_command, wait_for

LIMIT = 10
ROUND = 4  # clicks between two reads of the count: the overshoot is at most ROUND - 1
FLUSH = 0.2
DESTINATION = "https://shop.example/limited"
SOLD_OUT = "https://shop.example/sold-out"
CHROME = "Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/124.0 Safari/537.36"
GOOGLEBOT = "Mozilla/5.0 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)"
LINK_ID = "aaaaaaaa-0120-4000-8000-000000000120"


def _location(port: int, path: str, agent: str = CHROME) -> str:
    """One click on a new connection (the kernel picks the worker), its Location."""
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
    try:
        conn.request("GET", path, headers={"User-Agent": agent})
        answer = conn.getresponse()
        answer.read()
        assert answer.status == 302, answer.status
        return answer.headers["Location"]
    finally:
        conn.close()


def _seed(folder: Path, store: ServiceStore) -> None:
    seed = two_accounts()
    account = next(a for a in seed["accounts"] if a["id"] == A)
    account["links"].append({"id": LINK_ID, "code": "limited", "kind": "external", "destination_url": DESTINATION,
                             "max_clicks": LIMIT, "expired_url": SOLD_OUT})
    (folder / "seed.json").write_text(json.dumps(seed))
    done = subprocess.run([sys.executable, "-m", "linksvc", "seed", str(folder / "seed.json"), *store.args()],
                          capture_output=True, text=True, timeout=60, check=False)
    assert done.returncode == 0, done.stderr


def test_two_workers_hold_the_limit_of_clicks_by_people(tmp_path: Path, store: ServiceStore) -> None:
    _seed(tmp_path, store)
    port = free_port()
    env = {**os.environ, "LINKSVC_ADMIN_TOKEN": ADMIN_TOKEN, "LINKSVC_LOAD_DEMO": "0", "LINKSVC_LOG_LEVEL": "WARNING",
           "LINKSVC_CLICK_FLUSH_SECONDS": str(FLUSH)}
    log_path = tmp_path / "server.log"
    with log_path.open("wb") as log:
        process = subprocess.Popen(serve_command(port, store, "--workers", "2"), env=env, stdout=log,
                                   stderr=subprocess.STDOUT)
    try:
        assert ready(f"http://127.0.0.1:{port}") and wait_for(lambda: len(children(process.pid)) == 2), \
            log_path.read_text()
        human = "bot = 0 AND link_id = '" + LINK_ID + "'"
        through = 0
        sold_out_rounds = 0
        while sold_out_rounds < 3:
            answers = [_location(port, "/limited") for _ in range(ROUND)]
            _location(port, "/limited", GOOGLEBOT)  # bots are answered and never counted
            through += sum(1 for location in answers if location.startswith(DESTINATION))
            assert all(location.startswith(DESTINATION) or location == SOLD_OUT for location in answers)
            sold_out_rounds += answers == [SOLD_OUT] * ROUND
            # Both workers have written their clicks and read the count back before the next round.
            assert wait_for(lambda expected=through: store.count("clicks", human) == expected), \
                (store.count("clicks", human), through)
            time.sleep(3 * FLUSH)
        assert LIMIT <= through <= LIMIT + ROUND - 1
        # Once the count is read back, no worker lets a click through.
        assert [_location(port, "/limited") for _ in range(12)] == [SOLD_OUT] * 12
        counted = store.rows(f"SELECT sum(clicks) FROM link_human_clicks WHERE link_id = '{LINK_ID}'")[0][0]
        assert int(counted) == through
        assert store.count("clicks", f"bot = 1 AND link_id = '{LINK_ID}'") >= 1
        process.send_signal(signal.SIGTERM)
        assert process.wait(timeout=30) == 0
        assert store.count("clicks", human) == through  # the sold-out answers are not clicks
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()
