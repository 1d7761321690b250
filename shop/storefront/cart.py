"""The visitor's cart and checkout: add to cart, change or remove a line, a discount code,
a shipping estimate by country; then contact and address, shipping method and payment, and
the order placed by the API's own use cases (``shop/carts``): the same stock rule, the same
prices as ``POST /payments/quote``, the same one order per cart.

The cart's id lives in an HttpOnly, SameSite=Lax cookie; a refusal re-renders the page with
the domain's message and the visitor's input.
"""

from flask import abort, current_app, redirect, render_template, request, url_for
from marshmallow import ValidationError

from shop import db
from shop.api.schemas import ShippingAddressSchema
from shop.carts import claiming, completing, present
from shop.carts import store as carts
from shop.checkout import quoting
from shop.customers import addresses
from shop.errors import Conflict, NotFound, ShopError
from shop.http.context import current_actor
from shop.http.errors import fold_messages
from shop.payments import providers
from shop.pricing import rules
from shop.shipping import methods
from shop.storefront import browse, frame
from shop.storefront.frame import bp

_ADDRESS_FIELDS = ("name", "line1", "line2", "city", "postal_code", "region", "country")


def _cart() -> dict | None:
    """This browser's open cart as the API shows it, or None (none, gone, or completed)."""
    found = frame.cart_id()
    if found is None:
        return None
    try:
        row = carts.find(found, frame.holder())
    except NotFound:
        return None
    if row["status"] != "open":
        return None
    return present.present(row, frame.store_caller())


def _back(endpoint: str, cart: str | None = None, **values):
    response = redirect(url_for(endpoint, **values), 303)
    return frame.keep_cart(response, cart) if cart else response


@bp.post("/cart/lines")
def add_to_cart():
    """Add a variant to the cart (made on the first add), then show the cart."""
    quantity = _quantity(request.form.get("quantity", "1"))
    item = {"variant_id": request.form.get("variant_id", "")[:64], "quantity": quantity}
    cart = _cart()
    cart_id = cart["id"] if cart else carts.create(frame.holder())
    try:
        carts.add_line(cart_id, frame.holder(), item)
    except ShopError as refusal:
        slug = request.form.get("slug", "")[:200]
        page = browse.product_page(slug, item["variant_id"], refusal.message, _status(refusal))
        return frame.keep_cart(current_app.make_response(page), cart_id)
    return _back("store.cart", cart_id)


@bp.get("/cart")
def cart():
    """The cart: its lines with availability, a code, an estimate of shipping."""
    return _cart_page(_cart())


@bp.post("/cart/lines/<line_id>")
def change_line(line_id: str):
    """Change a line's quantity (0 removes it)."""
    cart = _cart() or abort(404)
    quantity = _quantity(request.form.get("quantity", "0"), allow_zero=True)
    try:
        if quantity == 0 or "remove" in request.form:
            carts.remove_line(cart["id"], frame.holder(), line_id[:64])
        else:
            carts.change_line(cart["id"], frame.holder(), line_id[:64], quantity)
    except ShopError as refusal:
        return _cart_page(cart, problem=refusal.message, status=_status(refusal))
    return _back("store.cart")


@bp.post("/cart/code")
def discount_code():
    """Use a discount code (an empty one removes it)."""
    cart = _cart() or abort(404)
    code = request.form.get("discount_code", "").strip()[:100] or None
    try:
        carts.update(cart["id"], frame.holder(), {"discount_code": code}, _check())
    except ShopError as refusal:
        return _cart_page(cart, problem=refusal.message, status=_status(refusal))
    return _back("store.cart")


def _cart_page(cart: dict | None, problem: str | None = None, status: int = 200):
    country = request.args.get("country", "").strip().upper()[:2]
    estimate = _estimate(cart, country) if cart and cart["lines"] and country else None
    page = render_template(
        "store/cart.html",
        shop=frame.shop_settings(),
        cart=cart,
        problem=problem,
        country=country,
        countries=countries(),
        estimate=estimate,
    )
    return page, status


@bp.get("/checkout")
def checkout():
    """The checkout: contact and address, shipping method, payment; one page, in steps."""
    cart = _cart()
    if cart is None or not cart["lines"]:
        return _back("store.cart")
    return _checkout_page(cart)


@bp.post("/checkout/details")
def checkout_details():
    """Keep the buyer's e-mail and address on the cart."""
    cart = _cart() or abort(404)
    address, problem = address_from(request.form)
    if problem:
        return _checkout_page(cart, problem=problem, status=400)
    return _keep_details(cart, {"shipping_address": address}, address["country"])


@bp.post("/checkout/saved")
def checkout_saved():
    """Ship to one of the signed-in customer's saved addresses (the cart keeps a copy)."""
    cart = _cart() or abort(404)
    caller = frame.store_caller() or abort(404)
    chosen = request.form.get("shipping_address_id", "")[:64]
    try:
        saved = addresses.get_address(caller.id, chosen)
    except NotFound:
        problem = "shipping_address_id: choose one of your addresses."
        return _checkout_page(cart, problem=problem, status=400)
    if saved["country"] not in countries():
        problem = f"country: no shipping method ships to {saved['country']}."
        return _checkout_page(cart, problem=problem, status=400)
    return _keep_details(cart, {"shipping_address_id": saved["id"]}, saved["country"])


def address_from(form) -> tuple[dict | None, str | None]:
    """An address of a form (the checkout's, the address book's) as the checkout's schema
    loads it, or the problem to show: a field's, or a country no method ships to."""
    given = {name: form.get(name, "").strip() for name in _ADDRESS_FIELDS}
    given = {name: value for name, value in given.items() if value or name == "line2"}
    try:
        address = ShippingAddressSchema().load(given)
    except ValidationError as error:
        return None, " ".join(fold_messages(error.messages))
    if address["country"] not in countries():
        return None, f"country: no shipping method ships to {address['country']}."
    return address, None


def _keep_details(cart: dict, changes: dict, country: str):
    """Keep the e-mail and the address (``changes``) on the cart; a signed-in customer may
    save a new address to their book in the same transaction."""
    email = request.form.get("email", "").strip()
    changes["email"] = email or None
    if frame.shop_settings().get("cart_reminders"):
        changes["reminders"] = request.form.get("reminders") == "1"
    if cart["shipping_method_id"] and not _ships(cart["shipping_method_id"], country):
        changes["shipping_method_id"] = None  # chosen for another country: choose again
    if not email or "@" not in email:
        return _checkout_page(cart, problem="email: Not a valid email address.", status=400)
    caller = frame.store_caller()
    save = caller is not None and "shipping_address" in changes and request.form.get("save")
    try:
        with db.transaction():
            if caller is not None and cart["customer_id"] is None:  # signed in elsewhere
                claiming.claim(cart["id"], caller.id)
            carts.update(cart["id"], frame.holder(), changes, _check())
            if save:
                book = addresses.AddressChange(changes["shipping_address"])
                addresses.add_address(caller.id, book)
    except ShopError as refusal:
        return _checkout_page(cart, problem=refusal.message, status=_status(refusal))
    return _back("store.checkout", _anchor="shipping")


@bp.post("/checkout/shipping")
def checkout_shipping():
    """Keep the chosen shipping method on the cart."""
    cart = _cart() or abort(404)
    method = request.form.get("shipping_method_id", "")[:64] or None
    try:
        carts.update(cart["id"], frame.holder(), {"shipping_method_id": method}, _check())
    except ShopError as refusal:
        return _checkout_page(cart, problem=refusal.message, status=_status(refusal))
    return _back("store.checkout", _anchor="payment")


@bp.post("/checkout/place")
def place_order():
    """Place the order (the cart's completion); then the order's page, or the card step."""
    cart = _cart() or abort(404)
    method = request.form.get("payment_method", "")
    if method not in providers.names():
        return _checkout_page(cart, problem="payment_method: choose how to pay.", status=400)
    if not _ships(cart["shipping_method_id"], (cart["shipping_address"] or {}).get("country")):
        return _checkout_page(cart, problem="shipping_method_id: choose a method.", status=400)
    command = completing.CompleteCart(cart["id"], method)
    try:
        order, token, _created = completing.complete(
            command, frame.holder(), frame.store_caller(), current_actor()
        )
    except ShopError as refusal:
        return _checkout_page(_cart() or cart, problem=refusal.message, status=_status(refusal))
    target = "store.pay" if method != "manual" else "store.order"
    response = redirect(url_for(target, order_id=order["id"], token=token, placed=1), 303)
    return frame.keep_cart(response, None)


def _checkout_page(cart: dict, problem: str | None = None, status: int = 200):
    address = cart["shipping_address"]
    choices = _methods(cart, address["country"]) if address else []
    caller = frame.store_caller()
    page = render_template(
        "store/checkout.html",
        shop=frame.shop_settings(),
        cart=cart,
        caller=caller,
        saved=addresses.list_addresses(caller.id) if caller else [],
        form=request.form if request.method == "POST" else {},
        problem=problem,
        countries=countries(),
        choices=choices,
        payment_methods=providers.names(),
    )
    return page, status


def _methods(cart: dict, country: str) -> list[dict]:
    """The methods that ship to ``country``, each with what it costs for this cart."""
    items = present.basket(carts.lines(cart["id"]))
    found = []
    for method in methods.active():
        if not rules.ships_to(method, country):
            continue
        try:
            priced = quoting.quote(items, {"country": country}, method["id"], None)
        except ShopError:
            continue
        found.append({**method, "cost_cents": priced["shipping_cents"]})
    return found


def _estimate(cart: dict, country: str) -> list[dict] | None:
    """The shipping methods to ``country`` and their costs, for the cart page's estimate."""
    if country not in countries():
        return None
    return _methods(cart, country)


def _ships(method_id: str | None, country: str | None) -> bool:
    method = methods.load(method_id) if method_id else None
    return bool(method and method["active"] and country and rules.ships_to(method, country))


def countries() -> dict[str, str]:
    """The countries the shop ships to (code: name in the shop's language), by name."""
    from babel import Locale

    names = Locale.parse(frame.shop_settings()["locale"]).territories
    served: set[str] = set()
    for method in methods.active():
        if not method["countries"]:  # ships everywhere
            served = {code for code in names if len(code) == 2 and code.isalpha()}
            break
        served.update(method["countries"])
    return dict(sorted(((c, names.get(c, c)) for c in served), key=lambda item: item[1]))


def _check():
    return present.check(frame.store_caller())


def _quantity(raw: str, allow_zero: bool = False) -> int:
    if not (raw.isascii() and raw.isdigit()) or len(raw) > 5:
        abort(400, "quantity: a whole number.")
    value = int(raw)
    if value < (0 if allow_zero else 1) or value > carts.MAX_QUANTITY:
        abort(400, f"quantity: 1 to {carts.MAX_QUANTITY}.")
    return value


def _status(refusal: ShopError) -> int:
    return 409 if isinstance(refusal, Conflict) else 400
