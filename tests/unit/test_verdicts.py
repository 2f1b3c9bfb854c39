"""The outcome an HTTP status gives when a vendor's body says nothing more, and vendor messages kept safe."""

from __future__ import annotations

import pytest

from linksvc.forwarding.verdicts import DELIVERED, FAILED, RETRY, Verdict, by_status, excerpt, json_body


@pytest.mark.parametrize("status, outcome", [
    (200, DELIVERED), (201, DELIVERED), (204, DELIVERED), (301, FAILED), (400, FAILED), (401, FAILED),
    (403, FAILED), (404, FAILED), (408, RETRY), (409, FAILED), (422, FAILED), (429, RETRY), (500, RETRY),
    (502, RETRY), (503, RETRY), (599, RETRY),
])
def test_by_status(status: int, outcome: str) -> None:
    assert by_status(status).outcome == outcome


def test_messages_are_safe_text_and_cut() -> None:
    verdict = Verdict(FAILED, "bad\r\nX-Forged: 1 " + "x" * 1000)
    assert verdict.message is not None and "\r" not in verdict.message and len(verdict.message) == 500
    with pytest.raises(ValueError):
        Verdict("maybe")


def test_bodies() -> None:
    assert json_body(b'{"code": 0}') == {"code": 0}
    assert json_body(b"<html>502</html>") is None and json_body(b"") is None
    assert excerpt(b"<html>\xff</html>") == "<html>\ufffd</html>"
