"""The vendors' parsers (linksvc.imports): each documented export read into the common row, table-driven over the
example exports of fixtures/imports, and what a parser does with rows and files that are not right."""

from __future__ import annotations

from pathlib import Path

import pytest

from linksvc.imports.rows import ExportProblem, ImportRow, created, short_parts
from linksvc.imports.vendors import VENDORS

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures" / "imports"

FIRST_ROWS = {
    "bitly": ImportRow(1, "spring-sale", "https://shop.example/spring?utm_source=newsletter&utm_medium=email"
                       "&utm_campaign=spring-sale", "Spring sale", ("spring", "email"), "2024-03-04T10:15:30Z",
                       "bit.ly"),
    "rebrandly": ImportRow(1, "summer24", "https://shop.example/catalogue/summer?utm_source=instagram"
                           "&utm_medium=social", "Summer catalogue", (), "2024-06-01T09:12:44Z", "rebrand.ly"),
    "shortio": ImportRow(1, "bf24", "https://shop.example/black-friday?utm_source=tiktok&utm_medium=paid"
                         "&utm_campaign=bf24", "Black Friday", ("black-friday", "paid"), "2024-11-20T12:00:00Z",
                         "acme.short.gy"),
    "shlink": ImportRow(1, "12C18", "https://shop.example/new-arrivals?utm_source=push&utm_medium=app",
                        "New arrivals", ("arrivals", "app"), "2024-04-10T09:00:00Z", "s.test"),
    "yourls": ImportRow(1, "winter", "https://shop.example/winter?utm_source=yourls&utm_campaign=winter",
                        "Winter collection", (), "2024-01-15T09:30:00Z", "sho.rt"),
    "kutt": ImportRow(1, "launch", "https://shop.example/launch?utm_source=kutt&utm_medium=link&utm_campaign=launch",
                      "Product launch", (), "2024-07-01T10:00:00Z", "kutt.it"),
}


@pytest.mark.parametrize("vendor", list(FIRST_ROWS))
def test_each_vendors_example_export_reads_into_common_rows(vendor: str) -> None:
    rows = VENDORS[vendor].rows((FIXTURES / f"{vendor}.json").read_text(encoding="utf-8"))
    assert rows[0] == FIRST_ROWS[vendor]
    assert len(rows) == 2 and rows[1].number == 2 and rows[1].problem is None and rows[1].code


def test_a_bitly_csv_with_the_documented_field_names_as_columns() -> None:
    text = ("\ufeffCreated at;Title;Link;Long URL;Tags\r\n"
            "2024-03-04 10:15:30;Spring;https://bit.ly/spring;https://shop.example/s;a, b|a\r\n"
            "\r\n"
            "2024-03-05;\"Quoted; title\";bit.ly/x1y;;\r\n")
    rows = VENDORS["bitly"].rows(text)
    assert rows == [
        ImportRow(2, "spring", "https://shop.example/s", "Spring", ("a", "b"), "2024-03-04T10:15:30Z", "bit.ly"),
        ImportRow(4, "x1y", "", "Quoted; title", (), "2024-03-05T00:00:00Z", "bit.ly", "has no destination URL"),
    ]


@pytest.mark.parametrize(("vendor", "text", "words"), [
    ("kutt", "<html>", "is not JSON"),
    ("kutt", '{"data": {"a": 1}}', "expected a list of links at data"),
    ("shlink", '{"shortUrls": {}}', "shortUrls.data or data"),
    ("yourls", '{"links": 3}', "stats action's object of links"),
    ("rebrandly", "[" * 5000 + "]" * 5000, "is not JSON"),
    ("bitly", 'a,"b\n', "is not a Bitly CSV export"),
    ("shortio", '{"links": [' + ",".join(["{}"] * 20_001) + "]}", "at most 20,000 an import"),
])
def test_a_file_that_is_not_the_export_is_refused_whole(vendor: str, text: str, words: str) -> None:
    with pytest.raises(ExportProblem, match=words.replace("(", r"\(").replace(".", r"\.")):
        VENDORS[vendor].rows(text)


def test_rows_that_are_not_links_fail_alone() -> None:
    rows = VENDORS["kutt"].rows('{"data": [3, {"address": "ok1", "target": "https://a.example/"}, '
                                '{"address": "bad1", "target": "https://b.example/", "banned": true}, '
                                '{"address": "shut", "target": "https://c.example/", "password": true}]}')
    assert [(row.number, row.code, row.problem) for row in rows] == [
        (1, None, "is not a link object"), (2, "ok1", None),
        (3, "bad1", "was banned on Kutt (its destination was reported as harmful)"),
        (4, "shut", "has a password on Kutt, which its export does not carry: create it here with a password of "
                    "its own")]


@pytest.mark.parametrize(("value", "expected"), [
    ("2024-03-04T10:15:30+0000", "2024-03-04T10:15:30Z"),
    ("2024-04-10T11:00:00+02:00", "2024-04-10T09:00:00Z"),
    ("2024-01-15 09:30:00", "2024-01-15T09:30:00Z"),
    (1_700_000_000, "2023-11-14T22:13:20Z"),
    ("last tuesday", "last tuesday"),
    ("0001-01-01T00:00:00+01:00", "0001-01-01T00:00:00+01:00"),
    (None, None),
])
def test_creation_times_read_as_utc(value: object, expected: str | None) -> None:
    assert created(value) == expected


@pytest.mark.parametrize(("short", "expected"), [
    ("https://bit.ly/abc", ("bit.ly", "abc")),
    ("bit.ly/abc", ("bit.ly", "abc")),
    ("https://Sho.RT./x/", ("sho.rt", "x")),
    ("https://[::1", (None, None)),
    (None, (None, None)),
])
def test_short_links_split_into_host_and_code(short: str | None, expected: tuple[str | None, str | None]) -> None:
    assert short_parts(short) == expected
