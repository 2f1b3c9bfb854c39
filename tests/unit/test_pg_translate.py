"""SQLite's statements in PostgreSQL's form (storage.postgres.translate)."""

from __future__ import annotations

import pytest

from storage.postgres import _arguments, _rowcount, translate


def test_question_marks_become_numbered_parameters() -> None:
    assert translate("SELECT a FROM t WHERE b = ? AND c IN (?, ?)") == (
        "SELECT a FROM t WHERE b = $1 AND c IN ($2, $3)", None)


def test_named_parameters_are_numbered_once_each() -> None:
    text, names = translate("SELECT * FROM t WHERE a = :account AND (b = :value OR c = :value) LIMIT :limit")
    assert text == "SELECT * FROM t WHERE a = $1 AND (b = $2 OR c = $2) LIMIT $3"
    assert names == ("account", "value", "limit")
    assert _arguments(names, {"limit": 5, "account": "x", "value": 7}) == ["x", 7, 5]


def test_quoted_text_casts_and_comments_are_left_alone() -> None:
    sql = "SELECT '?' || 'it''s :not' AS \"a?\", x::text FROM t -- what ? :no\nWHERE y = ?"
    assert translate(sql) == (
        "SELECT '?' || 'it''s :not' AS \"a?\", x::text FROM t -- what ? :no\nWHERE y = $1", None)


def test_insert_or_ignore_becomes_on_conflict_do_nothing() -> None:
    assert translate("INSERT OR IGNORE INTO t (a, b) VALUES (?, ?)")[0] == (
        "INSERT INTO t (a, b) VALUES ($1, $2) ON CONFLICT DO NOTHING")
    assert translate("insert or ignore into t (a) values (?) RETURNING a")[0] == (
        "INSERT INTO t (a) values ($1) ON CONFLICT DO NOTHING RETURNING a")


def test_mixed_parameter_styles_are_refused() -> None:
    with pytest.raises(ValueError):
        translate("SELECT * FROM t WHERE a = ? AND b = :b")


def test_parameters_must_match_the_statement_style() -> None:
    with pytest.raises(ValueError):
        _arguments(None, {"a": 1})
    with pytest.raises(ValueError):
        _arguments(("a",), [1])


@pytest.mark.parametrize(("status", "count"), [("INSERT 0 3", 3), ("UPDATE 2", 2), ("DELETE 0", 0),
                                               ("CREATE TABLE", -1)])
def test_rowcount_from_the_command_status(status: str, count: int) -> None:
    assert _rowcount(status) == count
