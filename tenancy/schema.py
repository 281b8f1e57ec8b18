"""OpenAPI description of the bearer token authentication."""

from typing import Any

from drf_spectacular.extensions import OpenApiAuthenticationExtension


# drf-spectacular registers extensions in an untyped __init_subclass__.
class BearerTokenScheme(OpenApiAuthenticationExtension):  # type: ignore[no-untyped-call]
    target_class = "tenancy.authentication.BearerTokenAuthentication"
    name = "bearerToken"

    def get_security_definition(self, auto_schema: Any) -> dict[str, str]:
        return {
            "type": "http",
            "scheme": "bearer",
            "description": "An API token of a business user (`st_…`), shown once when issued.",
        }
