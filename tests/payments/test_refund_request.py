"""``RefundRequest``'s limits, the one check of the API's and the console's refunds (pure)."""

import pytest

from shop.errors import Invalid
from shop.payments.refund_request import RefundRequest


def test_the_given_fields_make_the_body():
    request = RefundRequest(lines=[{"line": 1, "quantity": 2}], restock=[], reason="Chipped")
    assert request.checked() == {
        "lines": [{"line": 1, "quantity": 2}],
        "restock": [],
        "reason": "Chipped",
    }
    assert RefundRequest(amount_cents=5, shipping=False).checked() == {
        "amount_cents": 5,
        "shipping": False,
    }


@pytest.mark.parametrize(
    ("request_", "message"),
    [
        (RefundRequest(amount_cents=0), "amount_cents: give more than zero."),
        (RefundRequest(amount_cents=True), "amount_cents: give more than zero."),
        (RefundRequest(reason="x" * 501), "reason: at most 500 characters."),
        (
            RefundRequest(lines=[{"line": 1, "quantity": 1}] * 1001),
            "lines: give at most 1000 lines.",
        ),
        (
            RefundRequest(restock=[{"line": 1, "quantity": 1_000_001}]),
            "restock: line 1: give 1 to 1000000 units.",
        ),
        (RefundRequest(lines=[{"line": 0, "quantity": 1}]), "lines: a line is a number from 1."),
        (
            RefundRequest(lines=[{"line": 2, "quantity": 1}, {"line": 2, "quantity": 3}]),
            "lines: name each line once.",
        ),
        (RefundRequest(shipping="yes"), "shipping: give true or false."),
    ],
)
def test_a_broken_limit_is_refused_with_its_field(request_, message):
    with pytest.raises(Invalid) as refused:
        request_.checked()
    assert str(refused.value) == message
    assert RefundRequest(reason="x" * 500, amount_cents=1).checked()["amount_cents"] == 1
