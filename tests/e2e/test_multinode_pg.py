"""Three ``linksvc serve`` nodes on one PostgreSQL database, on loopback ports: events sent to all three are
applied once each and delivered at least once to a local receiver (duplicates counted), the customer
migration's rate limit holds across the nodes, and a ``kill -9`` of one node while the receiver is down
loses nothing: its claimed deliveries complete on the others once their lease is over (twice the delivery
timeout of 1 s plus 1 s here)."""

from __future__ import annotations

import signal
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.e2e.multinode import delivered_once, migrations, nodes, send, storefront, wait_delivered
from tests.pgstore import fresh_database_sync
from tests.processes import WebhookRecorder


@pytest.fixture
def database() -> Iterator[str]:
    """A fresh PostgreSQL database for the three nodes (created and dropped around the test)."""
    with fresh_database_sync() as url:
        yield url


def test_three_nodes_on_one_database(tmp_path: Path, database: str,
                                     receiver: tuple[str, type[WebhookRecorder]]) -> None:
    url, handler = receiver
    handler.up = True
    with nodes(tmp_path, 3, database) as started:
        bases = started.bases
        headers = storefront(bases, url)

        # Events to all three nodes: each applied once, each delivered at least once.
        delivered_once(database, bases, headers, handler, "multi", 45)

        # The customer migration's limit (15 requests per 5 s per account) across the nodes.
        answers = migrations(bases, headers)
        assert answers[200] == 15 and answers[429] == 15, answers

        # kill -9 of one node while the receiver is down: its claims complete on the others after the lease.
        handler.up = False
        handler.bodies.clear()
        crash = [send(bases[n % 3], headers, f"crash-{n}") for n in range(30)]
        time.sleep(1.5)  # every node has tried (and claimed) some of them
        started.processes[2].send_signal(signal.SIGKILL)
        started.processes[2].wait(timeout=10)
        handler.up = True
        delivered = wait_delivered(handler, crash)
        assert set(crash) <= set(delivered), f"{len(set(crash) & set(delivered))} of 30 delivered after the kill"
