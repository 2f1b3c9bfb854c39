"""Fixtures of the end-to-end tests: the store of the service a test starts (a SQLite file, or a fresh
PostgreSQL database with ``LINKSVC_TEST_DATABASE_URL`` set) and a local webhook receiver (see
:mod:`tests.processes`)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.processes import ServiceStore, WebhookRecorder, service_store, webhook_receiver


@pytest.fixture
def store(tmp_path: Path, store_choice: str | None) -> Iterator[ServiceStore]:
    """The store of the test's service: ``tmp_path/svc.db``, or a PostgreSQL database of its own."""
    with service_store(tmp_path, store_choice) as found:
        yield found


@pytest.fixture
def receiver() -> Iterator[tuple[str, type[WebhookRecorder]]]:
    """(URL, handler class) of a receiver that answers 503 until ``handler.up`` is set."""
    with webhook_receiver() as answer:
        yield answer
