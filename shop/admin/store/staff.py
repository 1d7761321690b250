"""The console's Staff and Roles pages (issue 37).

Staff (``users.*``): the list (search by name or e-mail), a new staff member, and a staff
member's page to assign a role, deactivate or activate, lift a sign-in lockout and reset
two-factor sign-in (a lost phone). Roles (``roles.*``): the list, a new role, and a role's
page with its permissions as checkboxes.

Each form is loaded through the API's schemas and runs the API's use case
(``auth/staff.py``, ``auth/roles.py``), so the API's rules hold here too, the ceiling first:
nobody grants or withdraws a permission they do not hold, nor changes someone who holds
more. The role form offers only the permissions the viewer holds (the others are shown,
greyed, and kept as they are); a forged form is refused by the use case all the same.
Resetting two-factor has no API route: it is the CLI's ``flask users reset-two-factor``,
offered here with ``users.update`` and the same ceiling.
"""

from flask import g, redirect, render_template, request, url_for

from shop.admin.store import forms
from shop.admin.store.forms import Refused
from shop.admin.views import _require, bp
from shop.api.store_input import (
    RoleCreateSchema,
    RoleUpdateSchema,
    UserCreateSchema,
    UserUpdateSchema,
)
from shop.auth import roles, staff
from shop.auth import two_factor as second_factor
from shop.auth.users import USER_SELECT, get_user
from shop.db.pages import LIKE, Where, like_pattern
from shop.permissions import CATALOGUE, OWNER_ROLE

USER_LABELS = {
    "email": "E-mail",
    "name": "Name",
    "password": "Password",
    "role": "Role",
    "active": "Active",
}
ROLE_LABELS = {"name": "Name", "permissions": "Permissions"}
_DONE = {
    "created": "Staff member created.",
    "role": "Role assigned.",
    "active": "Activated: they can sign in again.",
    "inactive": "Deactivated: their sessions have ended and they cannot sign in.",
    "unlocked": "Sign-in lockout lifted.",
    "not_locked": "Their sign-in was not locked; failed attempts are forgotten.",
    "two_factor": "Two-factor sign-in reset: their sessions have ended; they set it up again.",
    "role_created": "Role created.",
    "role_saved": "Role saved.",
}


# Staff


@bp.route("/staff")
def staff_list():
    """Staff members by e-mail, searched by name or e-mail."""
    _require("users.read")
    q = request.args.get("q", "")[:200].strip()
    where = Where()
    if q:
        where.add(f"(LOWER(u.email) {LIKE} OR LOWER(u.name) {LIKE})", q=like_pattern(q))
    result, pages = forms.listing(
        USER_SELECT,
        "users u JOIN roles r ON r.id = u.role_id",
        " ORDER BY u.email, u.id",
        forms.page_number(),
        where,
    )
    result["items"] = [
        {**staff.present(row), "locked": staff.is_locked_out(row["id"])} for row in result["items"]
    ]
    return render_template(
        "admin/store/staff.html",
        result=result,
        pages=pages,
        q=q,
        page_url=lambda number: url_for("admin.staff_list", q=q or None, page=number),
        done=_DONE.get(request.args.get("done", "")),
    )


def _role_names() -> list[tuple[str, str]]:
    """The roles the viewer may give: those within their own permissions."""
    return [
        (role["name"], role["name"])
        for role in roles.all_roles()
        if role["permissions"] <= g.caller.permissions
    ]


def _new_page(form: dict, error: Refused | None = None):
    page = render_template(
        "admin/store/staff_new.html",
        form=form,
        roles=_role_names(),
        error=error.message if error else None,
    )
    return (page, error.status, error.headers) if error else page


@bp.route("/staff/new")
def new_staff():
    """The form of a new staff member."""
    _require("users.create")
    return _new_page({"role": "support", "active": True})


@bp.route("/staff", methods=["POST"])
def create_staff():
    """Create a staff member, or show the form again with the API's refusal (never the
    password)."""
    _require("users.create")
    body = {
        "email": forms.text("email", 400),
        "name": forms.text("name", 400),
        "password": request.form.get("password", "")[:2000],
        "role": forms.text("role", 100),
        "active": forms.checked("active"),
    }
    try:
        data = forms.load(UserCreateSchema, body, USER_LABELS)
        created = forms.attempt(lambda: staff.create(data, g.caller), USER_LABELS)
    except Refused as refused:
        return _new_page({**body, "password": ""}, refused)
    return redirect(url_for("admin.staff_member", user_id=created["id"], done="created"), 303)


def _member_page(user_id: str, error: Refused | None = None):
    member = staff.present(get_user(user_id))
    two_factor = second_factor.status(user_id)
    page = render_template(
        "admin/store/staff_member.html",
        member=member,
        locked=staff.is_locked_out(user_id),
        two_factor=two_factor,
        roles=_role_names(),
        within=set(member["effective_permissions"]) <= g.caller.permissions,
        error=error.message if error else None,
        done=_DONE.get(request.args.get("done", "")),
    )
    return (page, error.status, error.headers) if error else page


@bp.route("/staff/<id:user_id>")
def staff_member(user_id):
    """A staff member's page: role, status, sign-in, and the actions the viewer may take."""
    _require("users.read")
    return _member_page(user_id)


def _act(user_id: str, done: str, action):
    """Run a staff action; back to their page saying what happened, or why not."""
    _require("users.update")
    get_user(user_id)
    try:
        answer = forms.attempt(action, USER_LABELS)
    except Refused as refused:
        return _member_page(user_id, refused)
    if done == "unlocked" and not answer:
        done = "not_locked"
    return redirect(url_for("admin.staff_member", user_id=user_id, done=done), 303)


@bp.route("/staff/<id:user_id>/role", methods=["POST"])
def assign_role(user_id):
    """Give a staff member another role (within the viewer's ceiling)."""
    try:
        data = forms.load(UserUpdateSchema, {"role": forms.text("role", 100)}, USER_LABELS)
    except Refused as refused:
        _require("users.update")
        return _member_page(user_id, refused)
    return _act(user_id, "role", lambda: staff.update_user(user_id, data, g.caller))


@bp.route("/staff/<id:user_id>/active", methods=["POST"])
def toggle_staff(user_id):
    """Deactivate a staff member (their sessions end) or activate them again."""
    active = request.form.get("set_active") == "1"
    return _act(
        user_id,
        "active" if active else "inactive",
        lambda: staff.update_user(user_id, {"active": active}, g.caller),
    )


@bp.route("/staff/<id:user_id>/unlock", methods=["POST"])
def unlock_staff(user_id):
    """Lift a staff member's sign-in lockout."""
    return _act(user_id, "unlocked", lambda: staff.unlock_user(user_id, g.caller))


@bp.route("/staff/<id:user_id>/two-factor/reset", methods=["POST"])
def reset_staff_two_factor(user_id):
    """Remove a staff member's second factor (a lost phone); their sessions end."""
    return _act(user_id, "two_factor", lambda: staff.reset_two_factor(user_id, g.caller))


# Roles


@bp.route("/roles")
def role_list():
    """Roles by name, with how many staff hold each."""
    _require("roles.read")
    return render_template(
        "admin/store/roles.html",
        roles=roles.all_roles(),
        held=roles.holders(),
        done=_DONE.get(request.args.get("done", "")),
    )


def _groups() -> list[tuple[str, list[str]]]:
    """The permission catalogue by resource, in its order."""
    return [
        (resource, [f"{resource}.{a}" for a in actions]) for resource, actions in CATALOGUE.items()
    ]


def _role_page(form: dict, role: dict | None, error: Refused | None = None):
    page = render_template(
        "admin/store/role.html",
        form=form,
        role=role,
        groups=_groups(),
        mine=g.caller.permissions,
        owner_role=OWNER_ROLE,
        error=error.message if error else None,
        done=_DONE.get(request.args.get("done", "")),
    )
    return (page, error.status, error.headers) if error else page


def _posted_role(role: dict | None) -> dict:
    """The posted role: its name and the permissions ticked, plus those it holds that the
    viewer cannot change (not offered, so not posted)."""
    ticked = set(request.form.getlist("permissions")[:200])
    kept = set(role["permissions"]) - g.caller.permissions if role else set()
    return {"name": forms.text("name", 200), "permissions": sorted(ticked | kept)}


@bp.route("/roles/new")
def new_role():
    """The form of a new role."""
    _require("roles.create")
    return _role_page({"name": "", "permissions": []}, None)


@bp.route("/roles", methods=["POST"])
def create_role():
    """Create a role, or show the form again with the API's refusal."""
    _require("roles.create")
    body = _posted_role(None)
    try:
        data = forms.load(RoleCreateSchema, body, ROLE_LABELS)
        created = forms.attempt(lambda: roles.create_role(data, g.caller), ROLE_LABELS)
    except Refused as refused:
        return _role_page(body, None, refused)
    return redirect(url_for("admin.role", role_id=created["id"], done="role_created"), 303)


@bp.route("/roles/<id:role_id>")
def role(role_id):
    """A role's page: its name and permissions as checkboxes."""
    _require("roles.read")
    found = roles.get_role(role_id)
    return _role_page(found, found)


@bp.route("/roles/<id:role_id>", methods=["POST"])
def update_role(role_id):
    """Rename a role or replace its permissions, or show the API's refusal."""
    _require("roles.update")
    found = roles.get_role(role_id)
    body = _posted_role(found)
    if found["builtin"]:
        body["name"] = found["name"]  # the form shows a built-in role's name, not a field
    try:
        data = forms.load(RoleUpdateSchema, body, ROLE_LABELS)
        forms.attempt(lambda: roles.update_role(role_id, data, g.caller), ROLE_LABELS)
    except Refused as refused:
        return _role_page({**found, **body}, found, refused)
    return redirect(url_for("admin.role", role_id=role_id, done="role_saved"), 303)
