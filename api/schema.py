"""OpenAPI: how the schema describes our token authentication (imported by api/urls.py)."""

import copy

from drf_spectacular.extensions import OpenApiAuthenticationExtension


class ApiTokenScheme(OpenApiAuthenticationExtension):
    target_class = "accounts.authentication.ApiTokenAuthentication"
    name = "apiToken"

    def get_security_definition(self, auto_schema):
        return {
            "type": "http",
            "scheme": "bearer",
            "description": (
                "A personal API token from your account page: `Authorization: Bearer pod_...`."
            ),
        }


# --- what every operation answers, said once (SPECTACULAR_SETTINGS["POSTPROCESSING_HOOKS"]) -------

ERROR_REF = {"$ref": "#/components/schemas/Error"}

# Answers any operation may give whatever its view does: DRF's authentication and throttles run
# before every view.
EVERY_OPERATION = {
    "401": (
        "The token sent is not valid (unknown, revoked or expired); `detail` says which. "
        "No token at all is reading anonymously."
    ),
    "429": (
        "Too many requests from this token or address (or a daily quota used up); "
        "`Retry-After` says in how many seconds to try again."
    ),
}
RETRY_AFTER = {
    "Retry-After": {
        "schema": {"type": "integer"},
        "description": "Seconds to wait before the next request.",
    }
}
NO_NUL = "^[^\\x00]*$"
FORM_MEDIA = ("multipart/form-data", "application/x-www-form-urlencoded")


def describe_what_every_operation_answers(result, generator, request, public):
    """The schema says what the API does where drf-spectacular cannot see it:

    - every operation may answer 401 (a bad token) and 429 (a throttle, `Retry-After`);
    - an empty query parameter is the parameter's default (DRF reads a query string as a
      form: `?sort=` is no sort given), so it is allowed, in an enum too;
    - a free string (a query parameter, a request body's field) holds no NUL;
    - a form field has no null: an empty one is not given (`nullable` is for JSON bodies).
    """
    operations = [
        operation
        for path_item in result.get("paths", {}).values()
        for operation in path_item.values()
        if isinstance(operation, dict) and "responses" in operation
    ]
    components = result.get("components", {}).get("schemas", {})
    sent = {
        body["schema"]["$ref"].rsplit("/", 1)[-1]
        for operation in operations
        for body in operation.get("requestBody", {}).get("content", {}).values()
        if "$ref" in body["schema"]
    }
    for name in sent:
        for field in components[name].get("properties", {}).values():
            _no_nul(field)
    for operation in operations:
        responses = operation["responses"]
        for status, description in EVERY_OPERATION.items():
            answer = responses.setdefault(
                status, {"content": {"application/json": {"schema": ERROR_REF}}}
            )
            if not answer.get("description"):
                answer["description"] = description
            if status == "429":
                answer.setdefault("headers", {}).update(RETRY_AFTER)
        for parameter in operation.get("parameters", []):
            if parameter.get("in") == "query":
                _no_nul(parameter["schema"])
                if not parameter.get("required"):
                    _empty_is_default(parameter["schema"])
        for media, body in operation.get("requestBody", {}).get("content", {}).items():
            if media in FORM_MEDIA:
                body["schema"] = _without_null(components, body["schema"])
    return result


def _empty_is_default(schema: dict) -> None:
    if schema.get("type") in ("integer", "number"):
        number = dict(schema)
        schema.clear()
        schema["anyOf"] = [number, {"type": "string", "enum": [""]}]
        return
    if schema.get("type") != "string":
        return
    schema.pop("minLength", None)
    if "enum" in schema and "" not in schema["enum"]:
        schema["enum"] = [*schema["enum"], ""]


def _no_nul(schema: dict) -> None:
    """A free string holds no NUL: every serializer's CharField refuses it (400), for
    PostgreSQL's text cannot store it."""
    if schema.get("type") == "string" and not {"enum", "format", "pattern"} & set(schema):
        schema["pattern"] = NO_NUL


def _without_null(components: dict, schema: dict) -> dict:
    """A form's copy of a body's schema with no field nullable (the JSON body keeps the
    component, where null means what it says)."""
    if "$ref" in schema:
        name = schema["$ref"].rsplit("/", 1)[-1]
        schema = components[name]
    schema = copy.deepcopy(schema)
    for field in schema.get("properties", {}).values():
        field.pop("nullable", None)
    return schema
