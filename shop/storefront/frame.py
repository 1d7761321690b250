"""The storefront's frame: its blueprints, how it is mounted (prefix, on or off), its theme
folder, its language, its headers (cacheable anonymous pages, a CSP without inline script)
and its error pages. The pages are in ``browse`` and ``seo`` beside this module.

The storefront is a second face of the same shop: it reads and writes through the same
domain functions as the API (``shop/catalogue``, ``shop/site``), so a page can never show or
allow what the API would not.
"""

import hashlib
import hmac
import os

from flask import Blueprint, current_app, g, render_template, request, url_for
from jinja2 import ChoiceLoader, FileSystemLoader, PrefixLoader
from werkzeug.exceptions import HTTPException

from shop.auth import sessions
from shop.carts import store as carts
from shop.http.errors import abort, error_response
from shop.http.hooks import page_headers
from shop.site import pages, settings
from shop.storefront import i18n

bp = Blueprint("store", __name__, template_folder="templates", static_folder="static")
# /robots.txt and /sitemap.xml live at the site's root, whatever the storefront's prefix.
root = Blueprint("store_root", __name__)

# Anonymous pages may be kept by browsers and proxies this long (seconds); a visitor with a
# cookie (a cart, a session) gets pages for them alone, revalidated by ETag.
CACHE_SECONDS = 60
# A theme's card template (docs/storefront.md): when its folder has one, each card is it.
THEME_CARD = "_card.html"
# Images: the shop's own, and a logo the owner may give as an https address.
_HEADERS = page_headers(img_src="'self' data: https:")
_HEADERS["Referrer-Policy"] = "strict-origin-when-cross-origin"
# Cookies that make a page personal (a customer's session, a visitor's cart).
_COOKIES = (sessions.CUSTOMER.cookie, sessions.ADMIN.cookie, "shop_cart")  # CART_COOKIE


def register(app) -> None:
    """Mount the storefront at ``STOREFRONT_PREFIX`` unless ``STOREFRONT`` is off; templates
    in ``THEME_DIR`` (by the same names, e.g. ``product.html``) replace the built-in ones."""
    if not app.config["STOREFRONT"]:
        return
    theme = app.config.get("THEME_DIR")
    card = None
    if theme:
        # Only the storefront's templates ("store/...") can come from the theme folder.
        app.jinja_loader = ChoiceLoader(
            [PrefixLoader({"store": FileSystemLoader(theme)}), *filter(None, [app.jinja_loader])]
        )
        if os.path.isfile(os.path.join(theme, THEME_CARD)):
            card = f"store/{THEME_CARD}"
    # A theme's own card, included once per product (the built-in cards are one inline loop).
    app.jinja_env.globals["theme_card"] = card
    i18n.install(app, lambda: shop_settings()["locale"])
    app.register_blueprint(bp, url_prefix=app.config["STOREFRONT_PREFIX"])
    app.register_blueprint(root)


CART_COOKIE = "shop_cart"
# Pages of one visitor's cart, order (an order's token is in its address) or draft order,
# and the account pages (``store.account...``): never kept.
_NEVER_KEPT = frozenset(
    {"store.cart", "store.checkout", "store.order", "store.pay", "store.paid"}
    | {"store.draft", "store.draft_pay", "store.draft_card", "store.draft_paid"}
    | {"store.balance", "store.balance_paid"}
)


def form_token() -> str:
    """This browser's form token: derived from the cookies that make its pages its own (a
    cart, a session), so a page cached for anonymous visitors carries the token every
    cookieless visitor has; such a visitor has nothing a forged form could change."""
    personal = "|".join(request.cookies.get(name, "") for name in _COOKIES)
    return hmac.new(personal.encode(), b"shop storefront form", hashlib.sha256).hexdigest()


def _same_origin() -> bool:
    """Whether a POST comes from one of our own pages, by the headers browsers send."""
    if request.headers.get("Sec-Fetch-Site", "same-origin") not in ("same-origin", "none"):
        return False
    origin = request.headers.get("Origin")
    return origin is None or origin == request.host_url.rstrip("/")


@bp.before_request
def guard():
    """Every POST comes from one of our pages (its Origin) and carries this browser's token."""
    if request.method != "POST":
        return
    sent = request.form.get("csrf_token", "")
    if not _same_origin() or not hmac.compare_digest(sent, form_token()):
        abort(403, "This form did not come from this shop, or has expired: reload the page.")


@bp.app_template_global("store_form_token")
def _form_token_global() -> str:
    return form_token()


def holder() -> carts.Holder:
    """Whose carts this browser reaches: a signed-in customer's, or a guest's."""
    caller = store_caller()
    return carts.Holder(caller.id if caller is not None else None)


def cart_id() -> str | None:
    """This browser's cart, by its cookie (None: none yet)."""
    return request.cookies.get(CART_COOKIE) or None


def keep_cart(response, cart: str | None):
    """Set (or with None, clear) the cart cookie: HttpOnly, SameSite=Lax, for the
    storefront's paths, as long as a cart lives."""
    path = current_app.config["STOREFRONT_PREFIX"]
    if cart is None:
        response.delete_cookie(CART_COOKIE, path=path)
        return response
    response.set_cookie(
        CART_COOKIE,
        cart,
        max_age=current_app.config["CART_TTL_DAYS"] * 86400,
        path=path,
        secure=current_app.config["COOKIE_SECURE"],
        httponly=True,
        samesite="Lax",
    )
    return response


def card_page(order: dict, client_secret: str, return_url: str, **more):
    """The card step of ``order`` (``store/pay.html``): Stripe's Payment Element with the
    intent's ``client_secret``, back to ``return_url``; its CSP widened to Stripe."""
    config = current_app.config
    response = current_app.make_response(
        render_template(
            "store/pay.html",
            shop=shop_settings(),
            order=order,
            client_secret=client_secret,
            publishable_key=config["STRIPE_PUBLISHABLE_KEY"],
            stripe_js=config["STRIPE_JS_URL"],
            return_url=return_url,
            **more,
        )
    )
    allow_stripe(response)
    return response


def allow_stripe(response) -> None:
    """Widen this page's CSP to Stripe.js and its frames (the card step alone)."""
    config = current_app.config
    origins = {_origin(config["STRIPE_JS_URL"]), "https://js.stripe.com"}
    api = {_origin(config["STRIPE_API_BASE"] or "https://api.stripe.com")}
    stripe = " ".join(sorted(origins))
    response.shop_csp = page_headers(
        img_src="'self' data: https:",
        script_src=f"'self' {stripe}",
        frame_src=f"{stripe} https://hooks.stripe.com",
        connect_src="'self' " + " ".join(sorted(origins | api)),
    )["Content-Security-Policy"]


def _origin(url: str) -> str:
    scheme, _, rest = url.partition("://")
    return f"{scheme}://{rest.split('/', 1)[0]}"


@bp.after_request
def headers(response):
    """The page headers; an anonymous GET page is cacheable for a minute, with its ETag."""
    for name, value in _HEADERS.items():
        response.headers[name] = value
    if getattr(response, "shop_csp", None):
        response.headers["Content-Security-Policy"] = response.shop_csp
    response.vary.add("Cookie")
    if request.endpoint in _NEVER_KEPT or (request.endpoint or "").startswith("store.account"):
        response.headers["Cache-Control"] = "no-store"
    elif (
        request.method == "GET" and response.status_code == 200 and not response.direct_passthrough
    ):
        personal = any(name in request.cookies for name in _COOKIES)
        response.headers["Cache-Control"] = (
            "private, no-cache" if personal else f"public, max-age={CACHE_SECONDS}"
        )
        response.add_etag()
        response.make_conditional(request)
    return response


@bp.errorhandler(HTTPException)
def error_page(error):
    """Every error of the storefront as a page, with the API's message and status."""
    body, status, headers = error_response(error)
    return _error_page(status, body["message"]), status, headers


def not_found_page(error):
    """A 404 or 405 under the storefront's prefix that matched no route: a page too."""
    body, status, headers = error_response(error)
    response = current_app.make_response((_error_page(status, body["message"]), status, headers))
    for name, value in _HEADERS.items():
        response.headers[name] = value
    return response


@bp.app_template_global()
def store_caller():
    """Who is browsing: a signed-in customer's caller, or None."""
    caller = getattr(g, "caller", None)
    return caller if caller is not None and caller.kind == "customer" else None


# The frame's fixed addresses (``base.html``): name -> (endpoint, values).
_FRAME_LINKS = {
    "icon": ("favicon", {}),
    "style": ("store.static", {"filename": "store.css"}),
    "theme": ("store.theme", {}),
    "home": ("store.home", {}),
    "search": ("store.search", {}),
    "products": ("store.products", {}),
    "cart": ("store.cart", {}),
    "account": ("store.account", {}),
    "sign_in": ("store.account_sign_in", {}),
}


@bp.app_template_global()
def frame_links() -> dict:
    """The frame's fixed addresses by name, built once per app and script root: nine
    ``url_for`` a page through the routing map were most of the frame's cost
    (docs/performance.md, "Storefront pages' rendering")."""
    built = current_app.extensions.setdefault("store_frame_links", {})
    root = request.script_root
    found = built.get(root)
    if found is None:
        if len(built) >= 64:  # a script root may come from a proxy's header: kept bounded
            built.clear()
        found = built[root] = {
            name: url_for(endpoint, **values) for name, (endpoint, values) in _FRAME_LINKS.items()
        }
    return found


def shop_settings() -> dict:
    """The shop's settings, read once for the page being drawn (its name, look, locale),
    with its published pages (``g.store_pages``, the footer's) in the same statement."""
    found = g.get("store_settings")  # one lookup through ``g``: every price on a page asks
    if found is None:
        found, g.store_pages = pages.with_settings()
        g.store_settings = found
    return found


def _error_page(status: int, message: str) -> str:
    """The error page; with the default settings when they cannot be read (the error may
    be that the database is down)."""
    try:
        shop = shop_settings()
    except Exception:  # noqa: BLE001 - the page must render whatever failed
        shop = g.store_settings = dict(settings.DEFAULTS)
    return render_template("store/error.html", status=status, message=message, shop=shop)
