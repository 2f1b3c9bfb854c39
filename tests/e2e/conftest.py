"""Fixtures of the end-to-end tests: a local webhook receiver (see :mod:`tests.processes`)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.processes import WebhookRecorder, webhook_receiver


@pytest.fixture
def receiver() -> Iterator[tuple[str, type[WebhookRecorder]]]:
    """(URL, handler class) of a receiver that answers 503 until ``handler.up`` is set."""
    with webhook_receiver() as answer:
        yield answer
