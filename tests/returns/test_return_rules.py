"""The pure rules of a return (shop/returns/rules.py): what may be asked for, the window,
what arrived."""

from datetime import UTC, datetime, timedelta

import pytest

from shop.errors import Conflict, Invalid
from shop.returns import rules

START = datetime(2026, 11, 1, 12, tzinfo=UTC)


def test_returnable_is_shipped_minus_held():
    assert rules.returnable({1: 3, 2: 2, 3: 0}, {1: 1, 2: 5}) == {1: 2, 2: 0, 3: 0}


def test_the_window_is_inclusive_of_its_last_moment():
    rules.check_open(START, 30, START + timedelta(days=30), "1001")
    with pytest.raises(Conflict, match="30-day window"):
        rules.check_open(START, 30, START + timedelta(days=30, seconds=1), "1001")
    with pytest.raises(Conflict, match="not shipped yet"):
        rules.check_open(None, 30, START, "1001")


@pytest.mark.parametrize(
    ("asked", "words"),
    [
        ([], "at least one line"),
        ([{"line": 0, "quantity": 1}], "a line is a number"),
        ([{"line": 1, "quantity": 0}], "give 1 to"),
        ([{"line": 1, "quantity": True}], "give 1 to"),
        ([{"line": 1, "quantity": 1}, {"line": 1, "quantity": 1}], "each line once"),
        ([{"line": 9, "quantity": 1}], "no line 9"),
        ([{"line": 1, "quantity": 3}], "line 1 has 2 unit(s) shipped and not yet returned"),
        ([{"line": 1, "quantity": 1, "reason": "x" * 501}], "at most 500"),
    ],
)
def test_asked_lines_refuses_naming_lines(asked, words):
    with pytest.raises(Invalid) as refused:
        rules.asked_lines(asked, {1: 2, 2: 0}, {1, 2})
    assert refused.value.message.startswith("lines:") and words in refused.value.message


def test_asked_lines_keeps_reasons_trimmed():
    asked = [{"line": 1, "quantity": 2, "reason": " Too small "}, {"line": 2, "quantity": 1}]
    assert rules.asked_lines(asked, {1: 2, 2: 1}, {1, 2}) == [
        {"line": 1, "quantity": 2, "reason": "Too small"},
        {"line": 2, "quantity": 1, "reason": None},
    ]


def test_arrived_defaults_to_every_unit_requested_and_caps_at_them():
    requested = [{"line": 1, "quantity": 2}, {"line": 3, "quantity": 1}]
    assert rules.arrived(requested, None) == {1: 2, 3: 1}
    assert rules.arrived(requested, [{"line": 1, "quantity": 1}]) == {1: 1, 3: 0}
    for given, words in (
        ([], "at least one line"),
        ([{"line": 2, "quantity": 1}], "no line 2"),
        ([{"line": 1, "quantity": 3}], "give 0 to 2 units"),
        ([{"line": 1, "quantity": 1}, {"line": 1, "quantity": 1}], "each line once"),
    ):
        with pytest.raises(Invalid, match="lines:") as refused:
            rules.arrived(requested, given)
        assert words in refused.value.message
