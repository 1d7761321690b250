"""The service's front door: ``GET /`` says what answers here and where to go next."""

from flask import current_app
from marshmallow import Schema, fields

from shop.api.common import Blueprint

blp = Blueprint("service", __name__, description="What this service is and where to start.")


class LinksSchema(Schema):
    swagger = fields.String(required=True, metadata={"description": "Interactive API docs."})
    openapi = fields.String(required=True, metadata={"description": "The OpenAPI description."})
    admin = fields.String(required=True, metadata={"description": "The admin console."})


class IndexSchema(Schema):
    name = fields.String(required=True)
    version = fields.String(required=True)
    links = fields.Nested(LinksSchema, required=True)


@blp.route("/")
@blp.doc(operationId="getIndex")
@blp.response(200, IndexSchema)
def index():
    """The service's name, version and links to its documentation and console.

    Public, and the same for everyone; it reads nothing from the database.
    """
    return {
        "name": current_app.config["API_TITLE"],
        "version": current_app.config["API_VERSION"],
        "links": INDEX_LINKS,
    }


INDEX_LINKS = {"swagger": "/swagger", "openapi": "/openapi.json", "admin": "/admin"}
