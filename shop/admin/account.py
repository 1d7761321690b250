"""The console's pages of one's own account: live sessions (end one, end the others) and
two-factor sign-in (set up, confirm, cancel, turn off), through ``shop/auth`` as the JSON API.

A set-up in progress is kept until it is confirmed or cancelled: a wrong code, a reload or
"Set up" again shows the same QR code, so the entry already scanned stays the right one."""

from flask import g, redirect, render_template, request, url_for
from werkzeug.exceptions import HTTPException

from shop import audit, db
from shop.admin.views import NUMBER_RE, bp, for_people
from shop.auth import sessions
from shop.auth import two_factor as second_factor
from shop.auth.passwords import MAX_LENGTH
from shop.auth.signin import end_session
from shop.auth.two_factor import TURN_OFF_LIMIT, TURN_OFF_SCOPE
from shop.errors import ShopError
from shop.http.context import clear_cookies, current_actor
from shop.http.errors import abort, as_http, error_response
from shop.http.extensions import limiter


@bp.route("/sessions")
def my_sessions():
    """This administrator's live sessions, most recently used first."""
    rows = sessions.live(sessions.ADMIN, g.caller.id)
    ended = request.args.get("ended", "")
    return render_template(
        "admin/sessions.html",
        rows=rows,
        ended=int(ended) if NUMBER_RE.fullmatch(ended) else None,
        ended_one="one" in request.args,
    )


@bp.route("/sessions/<id:session_id>/end", methods=["POST"])
def end_one_session(session_id):
    """Sign out one session (this one too: then back to the sign-in page)."""
    cleared = end_session(g.caller, session_id)
    if cleared is None:
        abort(404, "Session not found.")
    clear_cookies(cleared)
    if session_id == g.caller.session_id:
        return redirect(url_for("admin.login"), 303)
    return redirect(url_for("admin.my_sessions", one=1), 303)


@bp.route("/sessions/end-others", methods=["POST"])
def end_other_sessions():
    """Sign out every session of this administrator but this one."""
    with db.transaction():
        ended = sessions.end_all(sessions.ADMIN, g.caller.id, g.caller.session_id)
        audit.record("session.ended_others", {"ended": ended}, actor=current_actor())
    return redirect(url_for("admin.my_sessions", ended=ended), 303)


@bp.route("/two-factor")
def two_factor():
    """This administrator's two-factor sign-in: on or off, and how to change that."""
    return _two_factor_page(notice=_NOTICES.get(request.args.get("done", "")))


_NOTICES = {"cancelled": "Set-up cancelled: that key is no longer valid; delete its app entry."}


def _two_factor_page(error: str | None = None, status: int = 200, notice: str | None = None):
    """The page as it stands: on, off, or a set-up in progress (its QR code again)."""
    state = second_factor.status(g.caller.id)
    setup = None if state["enabled"] else second_factor.pending_setup(g.caller)
    page = render_template(
        "admin/two_factor.html", state=state, setup=setup, error=error, notice=notice
    )
    return page, status


@bp.route("/two-factor/setup", methods=["POST"])
def two_factor_setup():
    """A new secret and its QR code (or the one in progress), with the form to confirm it."""
    if second_factor.pending_setup(g.caller) is None:
        second_factor.set_up(g.caller)
    return redirect(url_for("admin.two_factor"), 303)


@bp.route("/two-factor/cancel", methods=["POST"])
def two_factor_cancel():
    """Drop the set-up in progress."""
    second_factor.cancel_setup(g.caller)
    return redirect(url_for("admin.two_factor", done="cancelled"), 303)


@bp.route("/two-factor/confirm", methods=["POST"])
def two_factor_confirm():
    """Turn it on with a code of the app: the recovery codes, shown this once."""
    code = request.form.get("code", "")[:16]
    if second_factor.pending_setup(g.caller) is None:
        return _two_factor_page("There is no set-up to confirm: start it again.", 409)
    try:
        codes = second_factor.confirm_setup(g.caller, code)
    except (HTTPException, ShopError):
        return _two_factor_page(WRONG_SETUP_CODE, 400)
    return render_template("admin/recovery_codes.html", codes=codes)


# The turn-off form's labels, for what the API says of a field.
_LABELS = {"password": "Your password", "otp": "The code"}
WRONG_SETUP_CODE = (
    "That code was not accepted, and two-factor sign-in is still off. The QR code below is"
    " unchanged: enter the code your app shows now for this shop (check the phone's clock),"
    " or cancel and start again."
)


@bp.route("/two-factor/disable", methods=["POST"])
@limiter.shared_limit(TURN_OFF_LIMIT, scope=TURN_OFF_SCOPE)
def two_factor_disable():
    """Turn it off with the password and a code."""
    try:
        second_factor.turn_off_with(
            g.caller,
            request.form.get("password", "")[:MAX_LENGTH],
            request.form.get("code", "")[:64],
        )
    except (HTTPException, ShopError) as caught:
        error = as_http(caught)
        body, status, _ = error_response(error)
        return _two_factor_page(for_people(body["message"], _LABELS), status)
    return redirect(url_for("admin.two_factor"), 303)
