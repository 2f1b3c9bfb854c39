"""The A/B split's pure parts (linksvc.links.variants, linksvc.reports.variants): the cookie, the weighted pick and
its stability, HTTPS through trusted proxies, the link model's rules, and the z-test against a hand computation."""

from __future__ import annotations

import ipaddress
import math
import random
from collections import Counter
from decimal import Decimal
from typing import Any

import pytest

from linksvc.errors import InvalidField
from linksvc.links.variants import (
    by_weight,
    cookie_name,
    cookie_value,
    is_https,
    pick,
    set_cookie,
    stable_fraction,
    with_target,
)
from linksvc.reports.variants import ZTest, report_of, verdict, z_test
from linksvc.resources.models import Link
from linksvc.resources.validation import validate
from storage.conversions import VariantClicks, VariantRevenue

LINK_ID = "0d6c3f0e-8a4f-4a53-9c1e-2f0b1b6f2a11"
SPLIT = [{"name": "A", "weight": 50}, {"name": "B", "weight": 30}, {"name": "C", "weight": 20}]


@pytest.mark.parametrize(("header", "name", "expected"), [
    ("", "lsv_x", None),
    ("lsv_x=B", "lsv_x", "B"),
    ("a=1; lsv_x=B%20two; b=2", "lsv_x", "B%20two"),
    ("lsv_xy=B", "lsv_x", None),  # another link's cookie
    ('lsv_x="B"', "lsv_x", "B"),
    ("lsv_x", "lsv_x", None),  # no value
    ("a=1;lsv_x=C", "lsv_x", "C"),
])
def test_cookie_value(header: str, name: str, expected: str | None) -> None:
    assert cookie_value(header, name) == expected


def test_the_cookie_is_http_only_lax_for_the_link_s_path_and_secure_over_https() -> None:
    plain = set_cookie(LINK_ID, "spring", "B two", secure=False)
    assert plain == f"lsv_{LINK_ID}=B%20two; Max-Age=7776000; Path=/spring; HttpOnly; SameSite=Lax"
    assert set_cookie(LINK_ID, "spring", "B", secure=True).endswith("; SameSite=Lax; Secure")
    assert cookie_name(LINK_ID) == f"lsv_{LINK_ID}"


@pytest.mark.parametrize(("fraction", "expected"), [
    (0.0, 0), (0.4999, 0), (0.5, 1), (0.7999, 1), (0.8, 2), (0.9999, 2),
])
def test_by_weight_places_the_fraction_on_the_cumulative_shares(fraction: float, expected: int) -> None:
    assert by_weight(SPLIT, fraction) == expected


@pytest.mark.parametrize(("variants", "cookie", "fraction", "expected"), [
    (SPLIT, "C", 0.0, 2),  # the cookie wins over the hash
    (SPLIT, "B", 0.99, 1),
    (SPLIT, "Z", 0.99, 2),  # a variant that is gone: the hash decides
    ([{"name": "A", "weight": 1}, {"name": "B", "weight": 0}], "B", 0.9, 0),  # weight 0: never sent there
    ([{"name": "A", "weight": 0}, {"name": "B", "weight": 3}], None, 0.0, 1),
    ([{"name": "A b", "weight": 1}, {"name": "x", "weight": 1}], "A%20b", 0.9, 0),  # percent-encoded name
])
def test_pick(variants: list[dict[str, Any]], cookie: str | None, fraction: float, expected: int) -> None:
    assert pick(variants, cookie, fraction) == expected


def test_the_hash_is_stable_and_depends_on_the_link_the_address_and_the_agent() -> None:
    first = stable_fraction(LINK_ID, "203.0.113.9", "UA 1")
    assert first == stable_fraction(LINK_ID, "203.0.113.9", "UA 1")
    assert 0 <= first < 1
    assert len({first, stable_fraction(LINK_ID, "203.0.113.8", "UA 1"), stable_fraction(LINK_ID, "203.0.113.9", "UA 2"),
                stable_fraction("other-link", "203.0.113.9", "UA 1")}) == 4


def test_weights_hold_over_many_visitors() -> None:
    """20,000 visitors (random addresses and agents, a fixed seed) without cookies: each variant's share is
    within 4 standard deviations of its weight's share (binomial), about ±1.4 points here."""
    rng = random.Random(34)
    visitors = 20_000
    picked = Counter(
        pick(SPLIT, None, stable_fraction(LINK_ID, str(ipaddress.IPv4Address(rng.getrandbits(32))),
                                          f"Agent/{rng.randrange(1000)}"))
        for _ in range(visitors))
    for index, share in enumerate((0.5, 0.3, 0.2)):
        sd = math.sqrt(visitors * share * (1 - share))
        assert abs(picked[index] - visitors * share) < 4 * sd, (index, picked)


def test_a_variant_target_replaces_the_link_s_own_url_fields_only() -> None:
    link = {"id": "l", "kind": "email", "destination_url": "https://a.example/", "deeplink": "app://a",
            "android": {"package": "com.a"}, "campaign_id": "c"}
    moved = with_target(link, {"destination_url": "https://b.example/"})
    assert moved == {"id": "l", "kind": "email", "destination_url": "https://b.example/", "deeplink": None,
                     "android": None, "ios": None, "fallback_url": None, "campaign_id": "c"}
    assert with_target(link, None) is link


TRUSTED = (ipaddress.ip_network("10.0.0.0/8"),)


@pytest.mark.parametrize(("peer", "proto", "trusted", "tls", "expected"), [
    ("10.1.2.3", "https", TRUSTED, False, True),
    ("10.1.2.3", "HTTPS, http", TRUSTED, False, True),
    ("10.1.2.3", "http", TRUSTED, False, False),
    ("203.0.113.9", "https", TRUSTED, False, False),  # not a trusted proxy: its word is not taken
    ("10.1.2.3", "https", (), False, False),
    ("::ffff:10.1.2.3", "https", TRUSTED, False, True),
    ("203.0.113.9", "", (), True, True),  # the connection itself is TLS
    (None, "https", TRUSTED, False, False),
])
def test_https_is_the_connection_s_or_a_trusted_proxy_s_word(peer: str | None, proto: str, trusted: Any,
                                                              tls: bool, expected: bool) -> None:
    assert is_https(peer, proto, trusted, tls) is expected


BASE = {"kind": "email", "destination_url": "https://shop.example/"}


@pytest.mark.parametrize(("variants", "issues"), [
    ([{"name": "A", "weight": 1}, {"name": "A", "weight": 1}], {"variants[1].name": "duplicate"}),
    ([{"name": "A", "weight": 0}, {"name": "B", "weight": 0}], {"variants": "range"}),
    ([{"name": "A", "weight": -1}], {"variants[0].weight": "range"}),
    ([{"name": "", "weight": 1}], {"variants[0].name": "string_too_short"}),
    ([{"name": "A", "weight": 1, "target": {"deeplink": "app://x"}}],
     {"variants[0].target": "one_of_required"}),
    ([{"name": "A", "weight": 1, "target": {"destination_url": "javascript:alert(1)"}}],
     {"variants[0].target.destination_url": "url"}),
    ([{"name": "A", "weight": 1, "target": {"link": "other", "destination_url": "https://x.example/"}}],
     {"variants[0].target": "not_allowed"}),
    ([{"name": "A", "weight": 1, "share": 3}], {"variants[0].share": "unknown_field"}),
    ([], {"variants": "too_few_items"}),
])
def test_the_split_s_rules_name_the_field(variants: list[Any], issues: dict[str, str]) -> None:
    with pytest.raises(InvalidField) as refused:
        validate(Link, {**BASE, "variants": variants})
    found = {issue.path: issue.type for issue in refused.value.issues}
    assert found == issues, found


def test_a_valid_split_is_kept() -> None:
    link = validate(Link, {**BASE, "variants": [
        {"name": "A", "weight": 1}, {"name": "B", "weight": 0},
        {"name": "C", "weight": 2, "target": {"destination_url": "https://shop.example/c", "deeplink": "shop://c"}},
        {"name": "D", "weight": 1, "target": {"link": "other-link"}}]})
    assert [v.name for v in link.variants or []] == ["A", "B", "C", "D"]


def _normal_cdf(x: float) -> float:
    return 0.5 * (1 + math.erf(x / math.sqrt(2)))


@pytest.mark.parametrize(("xc", "nc", "x", "n"), [(10, 100, 20, 100), (120, 1188, 148, 1204), (1, 4, 3, 4)])
def test_the_z_test_matches_the_formula_by_hand(xc: int, nc: int, x: int, n: int) -> None:
    pooled = (xc + x) / (nc + n)
    z = (x / n - xc / nc) / math.sqrt(pooled * (1 - pooled) * (1 / nc + 1 / n))
    found = z_test(xc, nc, x, n)
    assert isinstance(found, ZTest)
    assert found.z == pytest.approx(z, rel=1e-12)
    assert found.p_value == pytest.approx(2 * (1 - _normal_cdf(abs(z))), rel=1e-9)


def test_the_z_test_of_ten_and_twenty_percent_of_a_hundred() -> None:
    # pooled 0.15, se = sqrt(0.15 * 0.85 * 0.02) = 0.0504975, z = 0.1 / se = 1.980295,
    # p = 2 (1 - Phi(1.980295)) = 0.047670
    found = z_test(10, 100, 20, 100)
    assert isinstance(found, ZTest)
    assert round(found.z, 6) == 1.980295 and round(found.p_value, 6) == 0.04767


@pytest.mark.parametrize(("args", "reason"), [
    ((0, 0, 1, 10), "no visitor"), ((0, 10, 0, 10), "no purchase"), ((10, 10, 5, 5), "every visitor"),
    ((3, 2, 1, 10), "more purchases than visitors"),
])
def test_the_z_test_says_why_it_cannot_be_computed(args: tuple[int, int, int, int], reason: str) -> None:
    found = z_test(*args)
    assert isinstance(found, str) and reason in found


def test_the_verdict_in_plain_words() -> None:
    test = ZTest(2.1, 0.0286)
    assert verdict("B", "A", 0.123, 0.1, test, 1204, 1188) == \
        "B converts 23% better than A; 97% confidence; 1,204 and 1,188 visitors"
    assert verdict("B", "A", 0.08, 0.1, ZTest(-1.0, 0.31), 10, 12).startswith("B converts 20% worse than A; 69%")
    assert verdict("B", "A", 0.05, 0.0, ZTest(2.0, 0.04), 100, 90).startswith(
        "B converts at 5.00% where A has no purchase yet; 96% confidence")


def test_the_report_orders_variants_as_the_link_and_keeps_removed_ones_apart() -> None:
    link = {"id": "l", "code": "spring", "variants": [{"name": "A", "weight": 1}, {"name": "B", "weight": 1}]}
    report = report_of(link, [VariantClicks("B", 110, 3, 100), VariantClicks("A", 105, 0, 100),
                              VariantClicks("old", 5, 0, 5)],
                       [VariantRevenue("A", "USD", 10, Decimal("100.5")),
                        VariantRevenue("B", "USD", 18, Decimal("180")),
                        VariantRevenue("B", "EUR", 2, Decimal("20"))])
    rows = report["variants"]
    assert [(r["variant"], r["control"], r["in_link"]) for r in rows] == [("A", True, True), ("B", False, True),
                                                                          ("old", False, False)]
    assert rows[0]["revenue"] == {"USD": "100.50"} and rows[0]["conversion_rate"] == "0.1000"
    assert rows[1]["purchases"] == 20 and rows[1]["revenue"] == {"EUR": "20.00", "USD": "180.00"}
    assert rows[1]["significance"]["sample_sizes"] == {"B": 100, "A": 100}
    assert rows[1]["significance"]["z"] == round(z_test(10, 100, 20, 100).z, 4)  # type: ignore[union-attr]
    assert rows[1]["significance"]["verdict"] == "B converts 100% better than A; 95% confidence; 100 and 100 visitors"
    assert rows[1]["significance"]["significant"] is True
    assert rows[0]["significance"] is None and rows[2]["significance"] is None
