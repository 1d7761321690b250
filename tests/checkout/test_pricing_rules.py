"""The pricing function's rules (shop/pricing/rules.py), over random baskets.

Pure: no database, so these run once (not per engine). The HTTP tests (test_pricing_api.py)
show the same numbers through the quote and the checkout.
"""

from decimal import Decimal

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from shop import money
from shop.pricing.rules import Refusal, price, spread

FIXED = settings(
    max_examples=400,
    derandomize=True,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow],
)

percent = st.decimals(min_value=0, max_value=30, places=3).map(lambda d: str(d.normalize()))
lines = st.lists(
    st.fixed_dictionaries(
        {
            "unit_price_cents": st.integers(0, 200_000),
            "quantity": st.integers(1, 25),
            "weight_grams": st.none() | st.integers(0, 5000),
            "tax_class": st.sampled_from(["standard", "reduced"]),
            "product_id": st.sampled_from(["p1", "p2", "p3", "p4"]),
            "category_id": st.none() | st.sampled_from(["c1", "c2"]),
        }
    ),
    min_size=1,
    max_size=6,
)
rates = st.lists(
    st.fixed_dictionaries(
        {
            "country": st.sampled_from(["FR", "*", "US"]),
            "region": st.none(),
            "tax_class": st.sampled_from(["standard", "reduced"]),
            "rate": percent,
            "name": st.sampled_from(["VAT", "Sales tax"]),
        }
    ),
    max_size=4,
)
discounts = st.none() | st.fixed_dictionaries(
    {
        "code": st.just("CODE"),
        "kind": st.sampled_from(["percent", "fixed", "free_shipping"]),
        "value": st.integers(0, 100).map(str),
        "product_ids": st.sampled_from([[], ["p1"], ["p2", "p3"]]),
        "category_ids": st.sampled_from([[], ["c1"]]),
    }
)
methods = st.none() | st.fixed_dictionaries(
    {
        "name": st.just("Post"),
        "countries": st.sampled_from([[], ["FR"]]),
        "price_cents": st.integers(0, 3000),
        "free_over_cents": st.none() | st.integers(0, 500_000),
        "weight_bands": st.sampled_from(
            [
                [],
                [
                    {"up_to_grams": 500, "price_cents": 490},
                    {"up_to_grams": 10**9, "price_cents": 990},
                ],
            ]
        ),
        "tax_class": st.sampled_from(["standard", "reduced"]),
    }
)


@FIXED
@given(lines, rates, discounts, methods, st.booleans(), st.sampled_from(["EUR", "JPY", "KWD"]))
def test_totals_add_up_and_nothing_is_negative(basket, rate_list, discount, method, inclusive, cur):
    try:
        result = price(
            basket,
            country="FR",
            shipping=method,
            discount=discount,
            rates=rate_list,
            prices_include_tax=inclusive,
            currency=cur,
        )
    except Refusal as refusal:
        assert refusal.reason in {"not_applicable"}
        return
    out = result["lines"]
    assert result["subtotal_cents"] == sum(line["line_total_cents"] for line in out)
    assert result["discount_cents"] == sum(line["discount_cents"] for line in out)
    assert result["tax_cents"] == sum(t["amount_cents"] for t in result["tax_lines"])
    assert (
        result["tax_cents"] == sum(line["tax_cents"] for line in out) + result["shipping_tax_cents"]
    )
    added = 0 if inclusive else result["tax_cents"]
    assert result["total_cents"] == (
        result["subtotal_cents"] - result["discount_cents"] + result["shipping_cents"] + added
    )
    assert result["total_cents"] == sum(line["total_cents"] for line in out) + result[
        "shipping_cents"
    ] + (0 if inclusive else result["shipping_tax_cents"])
    for line in out:
        assert 0 <= line["discount_cents"] <= line["line_total_cents"]
        assert line["tax_cents"] >= 0 and line["total_cents"] >= 0
        if inclusive:  # the tax is inside the amount, never more than it
            assert line["tax_cents"] <= line["line_total_cents"] - line["discount_cents"]
    for key in ("discount_cents", "shipping_cents", "tax_cents", "total_cents"):
        assert result[key] >= 0
    if discount and discount["kind"] == "fixed":
        assert result["discount_cents"] == min(
            int(discount["value"]),
            sum(
                line["line_total_cents"]
                for line, given_line in zip(out, basket, strict=True)
                if _eligible(given_line, discount)
            ),
        )


def _eligible(line, discount):
    if not discount["product_ids"] and not discount["category_ids"]:
        return True
    return (
        line["product_id"] in discount["product_ids"]
        or line["category_id"] in (discount["category_ids"])
    )


@FIXED
@given(st.integers(0, 10**9), st.lists(st.integers(0, 10**7), min_size=1, max_size=8))
def test_spread_sums_exactly_and_never_exceeds_a_line(total, weights):
    total = min(total, sum(weights))
    parts = spread(total, weights)
    assert sum(parts) == (total if sum(weights) else 0)
    assert all(0 <= part <= weight for part, weight in zip(parts, weights, strict=True))


def test_largest_remainder_goes_first_and_ties_to_the_earlier_line():
    assert spread(100, [1, 1, 1]) == [34, 33, 33]
    assert spread(10, [333, 333, 334]) == [3, 3, 4]


def test_half_up_per_line_inclusive_extraction_and_shipping_at_its_class():
    rates = [
        {"country": "FR", "region": None, "tax_class": "standard", "rate": "20", "name": "VAT"},
        {"country": "FR", "region": None, "tax_class": "reduced", "rate": "5.5", "name": "VAT"},
    ]
    lines = [
        {"unit_price_cents": 1000, "quantity": 1, "tax_class": "reduced"},  # 55 tax
        {"unit_price_cents": 1003, "quantity": 1, "tax_class": "reduced"},  # 55.165 -> 55
        {"unit_price_cents": 1010, "quantity": 1, "tax_class": "reduced"},  # 55.55 -> 56
    ]
    method = {"name": "Post", "price_cents": 490, "tax_class": "standard"}
    result = price(lines, country="FR", shipping=method, rates=rates)
    assert [line["tax_cents"] for line in result["lines"]] == [55, 55, 56]
    assert result["shipping_tax_cents"] == 98
    assert result["tax_lines"] == [
        {"name": "VAT", "rate": "5.5", "amount_cents": 166},
        {"name": "VAT", "rate": "20", "amount_cents": 98},
    ]
    assert result["total_cents"] == 3013 + 490 + 264
    inclusive = price(lines[:1], country="FR", rates=rates, prices_include_tax=True)
    assert inclusive["tax_cents"] == 52  # 1000 * 5.5 / 105.5 = 52.13
    assert inclusive["total_cents"] == 1000


def test_a_full_discount_with_free_shipping_and_inclusive_prices_is_zero_not_negative():
    rates = [{"country": "*", "region": None, "tax_class": "standard", "rate": "20", "name": "T"}]
    lines = [{"unit_price_cents": 999, "quantity": 3}]
    hundred = {"code": "ALL", "kind": "percent", "value": "100"}
    result = price(
        lines,
        country="DE",
        shipping={"name": "Post", "price_cents": 500},
        discount=hundred,
        rates=rates,
        prices_include_tax=True,
    )
    assert result["discount_cents"] == 2997
    assert result["tax_cents"] == 83  # the shipping's: 500 * 20 / 120
    assert result["total_cents"] == 500
    free = {"code": "SHIP", "kind": "free_shipping", "value": "0"}
    result = price(
        lines,
        country="DE",
        shipping={"name": "Post", "price_cents": 500},
        discount=free,
        rates=rates,
        prices_include_tax=True,
    )
    assert result["shipping_cents"] == 0 and result["total_cents"] == 2997


def test_the_most_specific_rate_wins_and_no_rate_is_said():
    rates = [
        {"country": "*", "region": None, "tax_class": "standard", "rate": "10", "name": "Any"},
        {"country": "US", "region": None, "tax_class": "standard", "rate": "0", "name": "US"},
        {"country": "US", "region": "NY", "tax_class": "standard", "rate": "8.875", "name": "NY"},
    ]
    line = [{"unit_price_cents": 10000, "quantity": 1}]
    assert price(line, country="US", region="ny", rates=rates)["tax_cents"] == 888
    assert price(line, country="US", region="CA", rates=rates)["tax_cents"] == 0
    assert price(line, country="DE", rates=rates)["tax_cents"] == 1000
    none = price(line, country="DE", rates=[])
    assert none["tax_cents"] == 0 and none["tax_lines"] == []
    assert {"rule": "no_tax_rate", "detail": "No standard tax rate for DE: tax 0."} in (
        none["applied"]
    )


@pytest.mark.parametrize(
    ("currency", "minor", "text"),
    [("JPY", 1200, "1200"), ("EUR", 1999, "19.99"), ("KWD", 1005, "1.005"), ("EUR", 5, "0.05")],
)
def test_money_round_trips_by_the_currency_exponent(currency, minor, text):
    assert money.to_text(minor, currency) == text
    assert money.from_text(text, currency) == minor
    assert money.to_decimal(minor, currency) == Decimal(text)


def test_money_refuses_more_decimals_than_the_currency_has():
    with pytest.raises(ValueError, match="at most 0 decimals"):
        money.from_text("12.5", "JPY")
    with pytest.raises(ValueError, match="not a decimal"):
        money.from_text("1e", "EUR")
    assert money.from_text("103", "EUR") == 10300
    for text in ("1e2", "１００", "١٠٠", "1_000", "Infinity", "NaN", "1,000", "+1", "", ".", "-"):
        with pytest.raises(ValueError, match="not a decimal amount: write digits 0-9"):
            money.from_text(text, "EUR")
    assert [money.from_text(t, "KWD") for t in (" 1.5 ", ".5", "5.", "-0.001")] == [
        1500,
        500,
        5000,
        -1,
    ]
    assert money.display(120000, "JPY") == "¥120,000"
    assert money.display(1999, "EUR", "de_DE") == "19,99\xa0€"


@settings(max_examples=150, derandomize=True, deadline=None)
@given(
    st.integers(0, 10**13),
    st.sampled_from(["EUR", "JPY", "KWD", "USD", "CHF"]),
    st.sampled_from(["en_US", "de_DE", "fr_FR", "de_CH", "en_IN", "ja_JP"]),
)
def test_display_writes_what_babel_writes(minor, currency, locale):
    from babel.numbers import format_currency

    expected = format_currency(money.to_decimal(minor, currency), currency, locale=locale)
    assert money.display(minor, currency, locale) == expected
