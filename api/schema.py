"""OpenAPI: how the schema describes our token authentication (imported by api/urls.py)."""

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
