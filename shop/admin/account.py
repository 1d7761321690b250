"""The console's pages of one's own account: live sessions (end one, end the others) and
two-factor sign-in (set up, confirm, turn off), through ``shop/auth`` as the JSON API."""

from flask import g, redirect, render_template, request, url_for
from werkzeug.exceptions import HTTPException

from shop import audit, db
from shop.admin.views import NUMBER_RE, bp
from shop.auth import sessions
from shop.auth import two_factor as second_factor
from shop.auth.passwords import MAX_LENGTH
from shop.auth.signin import end_session
from shop.auth.two_factor import TURN_OFF_LIMIT, TURN_OFF_SCOPE
from shop.errors import abort, error_response
from shop.extensions import limiter


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
    if not end_session(g.caller, session_id):
        abort(404, "Session not found.")
    if session_id == g.caller.session_id:
        return redirect(url_for("admin.login"), 303)
    return redirect(url_for("admin.my_sessions", one=1), 303)


@bp.route("/sessions/end-others", methods=["POST"])
def end_other_sessions():
    """Sign out every session of this administrator but this one."""
    with db.transaction():
        ended = sessions.end_all(sessions.ADMIN, g.caller.id, g.caller.session_id)
        audit.record("session.ended_others", {"ended": ended})
    return redirect(url_for("admin.my_sessions", ended=ended), 303)


@bp.route("/two-factor")
def two_factor():
    """This administrator's two-factor sign-in: on or off, and how to change that."""
    state = second_factor.status(g.caller.id)
    return render_template("admin/two_factor.html", state=state, setup=None, error=None)


@bp.route("/two-factor/setup", methods=["POST"])
def two_factor_setup():
    """A new secret and its QR code, with the form to confirm it with a code."""
    setup = second_factor.set_up(g.caller)
    state = second_factor.status(g.caller.id)
    return render_template("admin/two_factor.html", state=state, setup=setup, error=None)


@bp.route("/two-factor/confirm", methods=["POST"])
def two_factor_confirm():
    """Turn it on with a code of the app: the recovery codes, shown this once."""
    try:
        codes = second_factor.confirm_setup(g.caller, request.form.get("code", "")[:16])
    except HTTPException as error:
        return _two_factor_refused(error)
    return render_template("admin/recovery_codes.html", codes=codes)


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
    except HTTPException as error:
        return _two_factor_refused(error)
    return redirect(url_for("admin.two_factor"), 303)


def _two_factor_refused(error: HTTPException):
    """The two-factor page again, saying why the change was refused."""
    body, status, _ = error_response(error)
    state = second_factor.status(g.caller.id)
    page = render_template("admin/two_factor.html", state=state, setup=None, error=body["message"])
    return page, status
