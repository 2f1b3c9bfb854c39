"""One-time codes against a real store, with explicit times: steps, single use, the attempt limit."""

from __future__ import annotations

import base64

import pytest
from aiohttp.test_utils import TestClient

from api.appkeys import DB
from linksvc.customers import totp
from linksvc.errors import RateLimited
from linksvc.seed import load_seed
from storage.db import fetch_one
from tests.factories import A, two_accounts

CUSTOMER = "cust-aaaa"
T0 = 1_800_000_000.0  # a step boundary: 1.8e9 is a multiple of 300


@pytest.fixture
async def db(client: TestClient):
    await load_seed(client.app[DB], two_accounts(), allow_private=True)
    return client.app[DB]


def test_hotp_matches_rfc_4226_appendix_d() -> None:
    key = b"12345678901234567890"
    expected = ["755224", "287082", "359152", "969429", "338314", "254676", "287922", "162583", "399871", "520489"]
    assert [totp.hotp(key, counter) for counter in range(10)] == expected


async def test_code_is_the_rfc_6238_code_of_the_step(db) -> None:
    issued = await totp.issue_code(db, A, CUSTOMER, T0 + 10.5)
    state = await fetch_one(db.reader, "SELECT secret FROM totp_state WHERE customer_id = ?", (CUSTOMER,))
    assert state is not None
    assert issued["code"] == totp.hotp(base64.b32decode(state["secret"]), int(T0 // 300))
    assert issued["seconds_left"] == 289
    assert issued["expired_at"] == "2027-01-15T08:05:00.000000Z"


async def test_same_step_same_code_next_step_new_code(db) -> None:
    first = await totp.issue_code(db, A, CUSTOMER, T0 + 1)
    again = await totp.issue_code(db, A, CUSTOMER, T0 + 299)
    later = await totp.issue_code(db, A, CUSTOMER, T0 + 300)
    assert first["code"] == again["code"] != later["code"]
    assert later["seconds_left"] == 300


@pytest.mark.parametrize(("offset", "valid"), [(0, True), (299, True), (300, True), (599, True), (600, False)])
async def test_code_is_valid_in_its_step_and_the_next(db, offset: float, valid: bool) -> None:
    code = (await totp.issue_code(db, A, CUSTOMER, T0))["code"]
    assert await totp.verify_code(db, CUSTOMER, code, T0 + offset) is valid


async def test_code_is_accepted_once(db) -> None:
    code = (await totp.issue_code(db, A, CUSTOMER, T0))["code"]
    assert await totp.verify_code(db, CUSTOMER, code, T0 + 5) is True
    assert await totp.verify_code(db, CUSTOMER, code, T0 + 6) is False
    assert await totp.verify_code(db, CUSTOMER, code, T0 + 305) is False


async def test_using_a_newer_code_spends_the_older_one(db) -> None:
    old = (await totp.issue_code(db, A, CUSTOMER, T0))["code"]
    new = (await totp.issue_code(db, A, CUSTOMER, T0 + 300))["code"]
    assert await totp.verify_code(db, CUSTOMER, new, T0 + 301) is True
    assert await totp.verify_code(db, CUSTOMER, old, T0 + 302) is False


async def test_five_failures_lock_until_the_next_step(db) -> None:
    code = (await totp.issue_code(db, A, CUSTOMER, T0))["code"]
    wrong = "000000" if code != "000000" else "111111"
    for attempt in range(5):
        assert await totp.verify_code(db, CUSTOMER, wrong, T0 + attempt) is False
    with pytest.raises(RateLimited) as locked:
        await totp.verify_code(db, CUSTOMER, code, T0 + 10)
    assert locked.value.retry_after == 290
    # The next step opens again, and the code of the previous step is still within its window.
    assert await totp.verify_code(db, CUSTOMER, code, T0 + 300) is True


async def test_four_failures_do_not_lock(db) -> None:
    code = (await totp.issue_code(db, A, CUSTOMER, T0))["code"]
    wrong = "000000" if code != "000000" else "111111"
    for attempt in range(4):
        assert await totp.verify_code(db, CUSTOMER, wrong, T0 + attempt) is False
    assert await totp.verify_code(db, CUSTOMER, code, T0 + 10) is True


async def test_failures_of_an_earlier_step_are_forgotten(db) -> None:
    code = (await totp.issue_code(db, A, CUSTOMER, T0 + 300))["code"]
    wrong = "000000" if code != "000000" else "111111"
    for attempt in range(4):
        await totp.verify_code(db, CUSTOMER, wrong, T0 + attempt)
    assert await totp.verify_code(db, CUSTOMER, wrong, T0 + 301) is False
    assert await totp.verify_code(db, CUSTOMER, code, T0 + 302) is True


async def test_no_code_ever_issued_is_invalid(db) -> None:
    assert await totp.verify_code(db, CUSTOMER, "123456", T0) is False
