"""The content registry (spec 4.6): pages, blocks and banners as JSON, keyed by slug.

An entry's ``checksum`` is the SHA-256 of the canonical JSON of its ``data`` (keys sorted, no
spaces, UTF-8), so a sync tool can diff against ``GET /content/registry`` without the data.
``POST /content/sync`` applies a whole folder at once: in one transaction, writing only what
changed.
"""

from flask import current_app, g, request
from flask.views import MethodView
from marshmallow import Schema, ValidationError, fields, validate, validates_schema
from werkzeug.routing import BaseConverter

from shop import audit, db, webhooks
from shop.api.common import (
    Blueprint,
    ChangedSinceQuerySchema,
    StrictBoolean,
    Where,
    changed_since,
    page_schema,
    paginate,
)
from shop.auth.caller import require
from shop.clock import now_iso
from shop.http.context import current_actor
from shop.http.decorators import require_permission, shows_more_with
from shop.http.errors import abort
from shop.site import content

blp = Blueprint("content", __name__, url_prefix="/content", description="Content registry.")

MAX_DATA_BYTES = content.MAX_DATA_BYTES
MAX_SYNC_ENTRIES = 10_000

_KEY_FORM = validate.Regexp(content.KEY_PATTERN, error=content.KEY_ERROR)
Type = validate.Regexp(content.TYPE_PATTERN, error=content.TYPE_ERROR)
RESERVED_KEYS = content.RESERVED_KEYS


def _not_reserved(key: str) -> None:
    if key in RESERVED_KEYS:
        raise ValidationError(f"{key!r} is reserved; choose another key.")


class _Data(fields.Dict):
    """A JSON object of at most ``MAX_DATA_BYTES`` in canonical form."""

    def _deserialize(self, value, attr, data, **kwargs):
        value = super()._deserialize(value, attr, data, **kwargs)
        problem = content.data_problem(value)  # inbound has refused lone surrogates already
        if problem:
            raise ValidationError(problem)
        return value


Key = [_KEY_FORM, _not_reserved]


class KeyConverter(BaseConverter):
    """``<content_key:key>``: any path segment but the reserved ones, so that
    ``/content/sync`` and ``/content/registry`` answer only their own methods."""

    regex = r"(?!(?:registry|sync)$)[^/]+"


def key_parameter_schema(_converter) -> dict:
    """How OpenAPI shows the ``key`` path parameter."""
    return {"type": "string", "pattern": _KEY_FORM.regex.pattern, "maxLength": 128}


blp.record_once(lambda state: state.app.url_map.converters.update(content_key=KeyConverter))


class ContentSchema(Schema):
    key = fields.String(required=True)
    type = fields.String(required=True)
    data = fields.Dict(required=True)
    published = fields.Boolean(required=True)
    checksum = fields.String(required=True, metadata={"description": "SHA-256 of `data`."})
    created_at = fields.String(required=True)
    updated_at = fields.String(required=True)


class RegistryEntrySchema(Schema):
    key = fields.String(required=True)
    type = fields.String(required=True)
    published = fields.Boolean(required=True)
    checksum = fields.String(required=True)
    updated_at = fields.String(required=True)


class ContentPutSchema(Schema):
    type = fields.String(required=True, validate=Type, metadata={"example": "page"})
    data = _Data(required=True, metadata={"description": "A JSON object, at most 256 KiB."})
    published = StrictBoolean(load_default=False)


class SyncEntrySchema(ContentPutSchema):
    key = fields.String(required=True, validate=Key)


class ContentSyncSchema(Schema):
    entries = fields.List(
        fields.Nested(SyncEntrySchema),
        required=True,
        validate=validate.Length(max=MAX_SYNC_ENTRIES),
    )
    prune = StrictBoolean(
        load_default=False, metadata={"description": "Delete the entries not in `entries`."}
    )
    dry_run = StrictBoolean(
        load_default=False, metadata={"description": "Answer what would change; write nothing."}
    )
    allow_empty = StrictBoolean(
        load_default=False,
        metadata={
            "description": "Confirm that an empty `entries` with `prune: true` deletes every"
            " entry; without it that body is a 400."
        },
    )

    @validates_schema
    def _empty_prune_is_confirmed(self, data, **_kwargs):
        """An empty set with prune deletes everything: the usual cause is a script run where
        its folder is missing or empty, so it needs ``allow_empty``."""
        if data.get("prune") and not data.get("entries") and not data.get("allow_empty"):
            raise ValidationError(
                "empty with prune: true would delete every entry; send"
                ' "allow_empty": true to mean it.',
                "entries",
            )

    @validates_schema
    def _unique_keys(self, data, **_kwargs):
        seen = set()
        for n, entry in enumerate(data.get("entries", [])):
            if entry["key"] in seen:
                raise ValidationError(
                    f"entries.{n}.key: {entry['key']!r} appears more than once.", "entries"
                )
            seen.add(entry["key"])


class SyncKeysSchema(Schema):
    created = fields.List(fields.String(), required=True)
    updated = fields.List(fields.String(), required=True)
    deleted = fields.List(fields.String(), required=True)


class SyncResultSchema(Schema):
    created = fields.Integer(required=True)
    updated = fields.Integer(required=True)
    deleted = fields.Integer(required=True)
    unchanged = fields.Integer(required=True)
    dry_run = fields.Boolean(required=True)
    keys = fields.Nested(SyncKeysSchema, required=True, metadata={"description": "Which ones."})


class RegistryQuerySchema(ChangedSinceQuerySchema):
    page_size = fields.Integer(load_default=100, validate=validate.Range(min=1, max=100))
    type = fields.String(validate=Type)
    published = fields.Boolean()


@blp.route("/registry")
class Registry(MethodView):
    @blp.doc(operationId="listContentRegistry")
    @blp.arguments(RegistryQuerySchema, location="query")
    @blp.response(200, page_schema(RegistryEntrySchema))
    @require_permission("content.read", key_scopes=("read:content", "write:content"))
    def get(self, args):
        """The registry: every entry without its data, by key

        Compare `checksum` with your own to find what changed. Pages hold 100 entries
        unless `page_size` says otherwise.
        """
        where = Where()
        if "type" in args:
            where.add("type = :type", type=args["type"])
        if "published" in args:
            where.add("published = :published", published=args["published"])
        order = changed_since(where, args, tie="key") or " ORDER BY key"
        return paginate(
            "SELECT key, type, published, checksum, updated_at FROM content_entries",
            "content_entries",
            where,
            order,
            args,
            convert=lambda row: {**row, "published": bool(row["published"])},
        )


@blp.url_value_preprocessor
def _allow_large_sync(endpoint, _values):
    """A sync carries a whole folder: it may exceed the usual body limit (its route only).
    Set before any hook runs, so a sync refused early still has its body read away
    (``shop.http.hooks.finish_response``)."""
    if endpoint == "content.Sync":
        request.max_content_length = current_app.config["CONTENT_SYNC_MAX_BYTES"]


@blp.route("/sync")
class Sync(MethodView):
    @blp.doc(operationId="syncContent")
    @blp.arguments(ContentSyncSchema)
    @blp.response(200, SyncResultSchema)
    @require_permission("content.update", key_scopes=("write:content",))
    def post(self, data):
        """Apply a whole set of entries at once

        In one transaction: creates the new keys, updates those whose type, data or
        `published` changed, and with `prune: true` deletes the keys not given (an empty
        `entries` with `prune: true` is a 400 unless `allow_empty: true`). One invalid
        entry is a 400 and nothing is written. `dry_run: true` answers the same counts
        without writing. Creating needs `content.create`, updating `content.update` and
        pruning `content.delete`: a key with `write:content` holds each one only while its
        owner does.
        """
        moment = now_iso()
        with db.transaction():
            db.lock("content")
            existing = {
                row["key"]: row
                for row in db.query("SELECT key, type, published, checksum FROM content_entries")
            }
            given = {e["key"]: content.row(e["key"], e, moment) for e in data["entries"]}
            created = [k for k in given if k not in existing]
            updated = [k for k in given if k in existing and content.changed(existing[k], given[k])]
            deleted = sorted(k for k in existing if k not in given) if data["prune"] else []
            # Each action against what the caller may do now: a key's write:content stands
            # for create, update and delete only as far as its owner still holds each one.
            if created:
                _require("content.create", "create entries")
            if updated:
                _require("content.update", "update entries")
            if deleted:
                _require("content.delete", "prune entries")
            if not data["dry_run"]:
                db.execute_many(content.INSERT, [given[k] for k in created])
                db.execute_many(content.UPDATE, [given[k] for k in updated])
                db.execute_many(
                    "DELETE FROM content_entries WHERE key = :key", [{"key": k} for k in deleted]
                )
                if created or updated or deleted:
                    audit.record(
                        "content.synced",
                        {"created": created, "updated": updated, "deleted": deleted},
                        actor=current_actor(),
                    )
                    webhooks.emit(
                        "content.synced", None, lambda _: _synced(created, updated, deleted)
                    )
        return {
            "created": len(created),
            "updated": len(updated),
            "deleted": len(deleted),
            "unchanged": len(given) - len(created) - len(updated),
            "dry_run": data["dry_run"],
            "keys": {"created": created, "updated": updated, "deleted": deleted},
        }


def _synced(created, updated, deleted) -> dict:
    """The ``content.synced`` event's data: the keys each part of the sync touched."""
    return {"keys": {"created": created, "updated": updated, "deleted": deleted}}


def _require(permission: str, what: str) -> None:
    """403 unless the caller also holds ``permission``."""
    require(g.caller, permission, purpose=what)


@blp.route("/<content_key:key>")
class ContentByKey(MethodView):
    @blp.doc(operationId="getContent")
    @shows_more_with("content.read", "drafts")
    @blp.response(200, ContentSchema)
    def get(self, key):
        """One entry

        Public when published; a draft is a 404 unless you hold `content.read`.
        """
        row = content.get(key)
        if row is None or not (row["published"] or (g.caller and g.caller.can("content.read"))):
            abort(404, "Content entry not found.")
        return content.present(row)

    @blp.doc(operationId="putContent")
    @blp.arguments(ContentPutSchema)
    @blp.response(200, ContentSchema)
    @blp.alt_response(201, schema=ContentSchema, description="Created.", success=True)
    @require_permission("content.update")
    def put(self, data, key):
        """Create or replace an entry

        Answers 201 when the key is new (which also needs `content.create`), 200 otherwise.
        `published` defaults to false.
        """
        created = content.put(
            key, data, current_actor(), lambda: _require("content.create", "create entries")
        )
        return content.present(content.get(key)), 201 if created else 200

    @blp.doc(operationId="deleteContent")
    @blp.response(204)
    @require_permission("content.delete")
    def delete(self, key):
        """Delete an entry"""
        content.delete(key, current_actor())
