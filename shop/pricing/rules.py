"""The one pricing function: a basket, an address, a shipping method, a discount and the tax
rates in; every amount of the order out, in integer minor units.

``price`` is pure (no database, no clock, no request): the quote and the checkout both call
it, so a quote and the order placed from the same basket agree to the minor unit. The rules
(discount, shipping, tax, totals) are in docs/orders.md, "Pricing".
"""

from decimal import Decimal

from shop.money import round_half_up, to_text

HUNDRED = Decimal(100)


class Refusal(Exception):
    """The basket cannot be priced as asked: ``field`` and ``reason`` say why (a 400)."""

    def __init__(self, field: str, reason: str, message: str):
        super().__init__(f"{field}: {reason}: {message}")
        self.field, self.reason, self.message = field, reason, message


def spread(total: int, weights: list[int]) -> list[int]:
    """``total`` split in proportion to ``weights``, largest remainder first (ties: the
    earlier line), so the parts sum to ``total``; with ``total <= sum(weights)`` no part
    exceeds its weight."""
    base = sum(weights)
    if not total or not base:
        return [0] * len(weights)
    parts = [total * w // base for w in weights]
    remainders = [total * w % base for w in weights]
    left = total - sum(parts)
    for i in sorted(range(len(weights)), key=lambda i: (-remainders[i], i))[:left]:
        parts[i] += 1
    return parts


def rate_for(rates, country: str, region: str | None, tax_class: str) -> dict | None:
    """The most specific rate for a destination and class (country + region, country, *)."""
    best, best_score = None, 0
    wanted_region = (region or "").strip().upper()
    for rate in rates:
        if rate["tax_class"] != tax_class:
            continue
        rate_region = (rate.get("region") or "").upper()
        if rate["country"] == country and rate_region:
            score = 3 if rate_region == wanted_region else 0
        elif rate["country"] == country:
            score = 2
        elif rate["country"] == "*":
            score = 1
        else:
            score = 0
        if score > best_score:
            best, best_score = rate, score
    return best


def _eligible(line: dict, discount: dict) -> bool:
    products, categories = discount.get("product_ids") or [], discount.get("category_ids") or []
    if not products and not categories:
        return True
    return line.get("product_id") in products or (
        line.get("category_id") is not None and line.get("category_id") in categories
    )


def _discount(subtotals, lines, discount, currency, applied) -> tuple[list[int], bool]:
    """Each line's discount and whether shipping is free by the code."""
    if discount is None:
        return [0] * len(lines), False
    code = discount["code"]
    minimum = discount.get("min_subtotal_cents")
    if minimum is not None and sum(subtotals) < minimum:
        raise Refusal(
            "discount_code",
            "min_subtotal",
            f"{code} needs a subtotal of at least {to_text(minimum, currency)} {currency}.",
        )
    weights = [
        s if _eligible(line, discount) else 0 for s, line in zip(subtotals, lines, strict=True)
    ]
    eligible = [_eligible(line, discount) for line in lines]
    if not any(eligible):
        raise Refusal("discount_code", "not_applicable", f"{code} applies to none of these items.")
    kind, base = discount["kind"], sum(weights)
    if kind == "free_shipping":
        applied.append({"rule": "discount", "detail": f"{code}: free shipping."})
        return [0] * len(lines), True
    if kind == "percent":
        amount = round_half_up(base * Decimal(discount["value"]) / HUNDRED)
        detail = f"{code}: {discount['value']}% off"
    else:
        amount = int(discount["value"])
        detail = f"{code}: {to_text(amount, currency)} off"
    amount = min(amount, base)
    scope = "" if all(eligible) else f" {sum(eligible)} of {len(lines)} lines"
    applied.append(
        {"rule": "discount", "detail": f"{detail}{scope}, {to_text(amount, currency)} in all."}
    )
    return spread(amount, weights), False


def ships_to(method: dict, country: str) -> bool:
    """Whether ``method`` ships to ``country``: it lists it, or lists no country (anywhere)."""
    return not method.get("countries") or country in method["countries"]


def _shipping(method, country, lines, after_discount, free_by_code, currency, applied) -> int:
    """The shipping charged (before tax when prices exclude it)."""
    if method is None:
        applied.append({"rule": "no_shipping_method", "detail": "No shipping method: 0."})
        return 0
    name = method["name"]
    if not ships_to(method, country):
        raise Refusal("shipping_method_id", "not_served", f"{name} does not ship to {country}.")
    weight = sum((line.get("weight_grams") or 0) * line["quantity"] for line in lines)
    charge = method["price_cents"]
    bands = sorted(method.get("weight_bands") or [], key=lambda band: band["up_to_grams"])
    if bands:
        band = next((b for b in bands if weight <= b["up_to_grams"]), None)
        if band is None:
            raise Refusal(
                "shipping_method_id",
                "too_heavy",
                f"{name} carries up to {bands[-1]['up_to_grams']} g; the basket weighs {weight} g.",
            )
        charge = band["price_cents"]
        detail = f"{name}: {weight} g, band up to {band['up_to_grams']} g."
    else:
        detail = f"{name}: flat price."
    applied.append({"rule": "shipping", "detail": detail})
    free_over = method.get("free_over_cents")
    if free_over is not None and after_discount >= free_over and charge:
        applied.append(
            {"rule": "free_shipping_over", "detail": f"Free from {to_text(free_over, currency)}."}
        )
        return 0
    if free_by_code:
        return 0
    return charge


def _tax(amount: int, rate: dict | None, inclusive: bool) -> int:
    if rate is None or not amount:
        return 0
    percent = Decimal(rate["rate"])
    if inclusive:
        return round_half_up(amount * percent / (HUNDRED + percent))
    return round_half_up(amount * percent / HUNDRED)


def price(
    lines: list[dict],
    *,
    country: str,
    region: str | None = None,
    shipping: dict | None = None,
    shipping_tax_class: str = "standard",
    discount: dict | None = None,
    rates=(),
    prices_include_tax: bool = False,
    currency: str = "EUR",
) -> dict:
    """Price a basket. ``lines``: ``unit_price_cents``, ``quantity``, ``weight_grams``,
    ``tax_class``, ``product_id``, ``category_id``. Raises ``Refusal``."""
    applied = []
    if prices_include_tax:
        applied.append({"rule": "prices_include_tax", "detail": "Prices include tax."})
    subtotals = [line["unit_price_cents"] * line["quantity"] for line in lines]
    discounts, free_by_code = _discount(subtotals, lines, discount, currency, applied)
    after_discount = sum(subtotals) - sum(discounts)
    charge = _shipping(shipping, country, lines, after_discount, free_by_code, currency, applied)
    if shipping is not None:
        shipping_tax_class = shipping.get("tax_class") or shipping_tax_class
    taxed, groups, missing = [], {}, set()

    def tax_of(amount: int, tax_class: str) -> tuple[int, dict | None]:
        rate = rate_for(rates, country, region, tax_class)
        tax = _tax(amount, rate, prices_include_tax)
        if rate is None:
            missing.add(tax_class)
        else:
            key = (rate["name"], rate["rate"], rate["country"], rate.get("region"))
            group = groups.setdefault(key, {"name": rate["name"], "rate": rate["rate"]})
            group["amount_cents"] = group.get("amount_cents", 0) + tax
        return tax, rate

    out_lines = []
    for line, subtotal, off in zip(lines, subtotals, discounts, strict=True):
        tax, rate = tax_of(subtotal - off, line.get("tax_class") or "standard")
        taxed.append(tax)
        out_lines.append(
            {
                "unit_price_cents": line["unit_price_cents"],
                "quantity": line["quantity"],
                "line_total_cents": subtotal,
                "discount_cents": off,
                "tax_cents": tax,
                "tax_rate": rate["rate"] if rate else None,
                "total_cents": subtotal - off + (0 if prices_include_tax else tax),
            }
        )
    shipping_tax = tax_of(charge, shipping_tax_class)[0] if charge else 0
    for tax_class in sorted(missing):
        applied.append(
            {"rule": "no_tax_rate", "detail": f"No {tax_class} tax rate for {country}: tax 0."}
        )
    tax_total = sum(taxed) + shipping_tax
    subtotal, discount_total = sum(subtotals), sum(discounts)
    return {
        "lines": out_lines,
        "subtotal_cents": subtotal,
        "discount_cents": discount_total,
        "shipping_cents": charge,
        "shipping_tax_cents": shipping_tax,
        "tax_cents": tax_total,
        "total_cents": subtotal
        - discount_total
        + charge
        + (0 if prices_include_tax else tax_total),
        "tax_lines": [
            {**group, "amount_cents": group.get("amount_cents", 0)} for group in groups.values()
        ],
        "prices_include_tax": prices_include_tax,
        "currency": currency,
        "applied": applied,
    }


def refund_share(line_total: int, quantity: int, already: int, count: int) -> int:
    """What ``count`` more units of a line are worth back, ``already`` units refunded before.

    Cumulative floor of the line's own priced total (after its discount, with its tax when
    prices exclude it): refunding every unit, in any steps, gives back exactly that total.
    """
    if quantity <= 0:
        return 0
    return line_total * (already + count) // quantity - line_total * already // quantity


def shipping_charged(shipping_cents: int, shipping_tax_cents: int, inclusive: bool) -> int:
    """The shipping the customer paid: its tax is added when prices exclude tax."""
    return shipping_cents if inclusive else shipping_cents + shipping_tax_cents
