"""The one error type of SparkTide and its rendering as RFC 9457 problem details.

Domain code only raises ``SparkTideError``; the DRF exception handler below
and the WebSocket consumer turn it into ``application/problem+json`` or an
error frame. Every code is documented in docs/errors.md and the OpenAPI schema.
"""

from enum import StrEnum
from http import HTTPStatus

from rest_framework import exceptions as drf_exceptions
from rest_framework.response import Response
from rest_framework.views import exception_handler as drf_exception_handler


class ErrorCode(StrEnum):
    # Requests
    AUTHENTICATION_REQUIRED = "AUTHENTICATION_REQUIRED"
    INVALID_REQUEST = "INVALID_REQUEST"
    METHOD_NOT_ALLOWED = "METHOD_NOT_ALLOWED"
    RESOURCE_NOT_FOUND = "RESOURCE_NOT_FOUND"
    APP_NOT_ACTIVE = "APP_NOT_ACTIVE"
    AGENT_NOT_AVAILABLE = "AGENT_NOT_AVAILABLE"
    RUN_ALREADY_FINISHED = "RUN_ALREADY_FINISHED"
    BUSINESS_PERMISSION_DENIED = "BUSINESS_PERMISSION_DENIED"
    # Events and retention
    EVENT_CURSOR_EXPIRED = "EVENT_CURSOR_EXPIRED"
    TICKET_INVALID = "TICKET_INVALID"
    CLIENT_TOO_SLOW = "CLIENT_TOO_SLOW"
    # Citations and preview
    CITATION_NOT_AVAILABLE = "CITATION_NOT_AVAILABLE"
    CITATION_SOURCE_CHANGED = "CITATION_SOURCE_CHANGED"
    CITATION_PREVIEW_TIMED_OUT = "CITATION_PREVIEW_TIMED_OUT"
    CITATION_LIMIT_EXCEEDED = "CITATION_LIMIT_EXCEEDED"
    KNOWLEDGE_ACCESS_CHANGED = "KNOWLEDGE_ACCESS_CHANGED"
    SECURITY_POLICY_CHANGED = "SECURITY_POLICY_CHANGED"
    KNOWLEDGE_ACCESS_DENIED = "KNOWLEDGE_ACCESS_DENIED"
    CAPABILITY_UNAVAILABLE = "CAPABILITY_UNAVAILABLE"
    KNOWLEDGE_SOURCE_ERROR = "KNOWLEDGE_SOURCE_ERROR"
    KNOWLEDGE_SOURCE_UNAVAILABLE = "KNOWLEDGE_SOURCE_UNAVAILABLE"
    # Domain integrity
    IMMUTABLE_VERSION = "IMMUTABLE_VERSION"


class SparkTideError(Exception):
    """An error with a documented ``code`` and the HTTP status it maps to."""

    def __init__(self, code: ErrorCode, status: int, detail: str = "") -> None:
        self.code = code
        self.status = status
        self.detail = detail or code.replace("_", " ").capitalize()
        super().__init__(f"{code}: {self.detail}")

    def problem(self) -> dict:
        return {
            # A URN, not a URL: nothing to fetch, and the same for every deployment.
            "type": f"urn:sparktide:problem:{self.code.lower().replace('_', '-')}",
            "title": HTTPStatus(self.status).phrase,
            "status": self.status,
            "code": str(self.code),
            "detail": self.detail,
        }


def not_found() -> SparkTideError:
    """The single 404 for anything the caller may not know exists."""
    return SparkTideError(ErrorCode.RESOURCE_NOT_FOUND, 404, "The resource does not exist.")


class ProblemResponse(Response):
    def __init__(self, error: SparkTideError, headers: dict | None = None) -> None:
        super().__init__(
            error.problem(),
            status=error.status,
            headers=headers,
            content_type="application/problem+json",
        )


def _from_drf(exc: drf_exceptions.APIException) -> SparkTideError:
    if isinstance(exc, drf_exceptions.NotAuthenticated | drf_exceptions.AuthenticationFailed):
        return SparkTideError(
            ErrorCode.AUTHENTICATION_REQUIRED, 401, "A valid bearer token is required."
        )
    if isinstance(exc, drf_exceptions.MethodNotAllowed):
        return SparkTideError(ErrorCode.METHOD_NOT_ALLOWED, 405, str(exc.detail))
    if isinstance(exc, drf_exceptions.NotFound | drf_exceptions.PermissionDenied):
        return not_found()
    if isinstance(
        exc,
        drf_exceptions.ValidationError
        | drf_exceptions.ParseError
        | drf_exceptions.UnsupportedMediaType,
    ):
        return SparkTideError(ErrorCode.INVALID_REQUEST, 400, _flatten(exc.detail))
    return SparkTideError(ErrorCode.INVALID_REQUEST, exc.status_code, str(exc.detail))


def _flatten(detail, prefix: str = "") -> str:
    if isinstance(detail, dict):
        return "; ".join(_flatten(v, f"{prefix}{k}: ") for k, v in detail.items())
    if isinstance(detail, list):
        return "; ".join(_flatten(v, prefix) for v in detail)
    return f"{prefix}{detail}"


def problem_exception_handler(exc, context):
    if isinstance(exc, SparkTideError):
        error = exc
    elif isinstance(exc, drf_exceptions.APIException):
        error = _from_drf(exc)
    else:
        from django.http import Http404

        if isinstance(exc, Http404):
            error = not_found()
        else:
            return drf_exception_handler(exc, context)
    headers = {}
    if error.status == 401:
        headers["WWW-Authenticate"] = 'Bearer realm="sparktide"'
    return ProblemResponse(error, headers=headers)
