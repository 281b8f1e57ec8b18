"""Typed errors. Every one carries ``code`` (the server's documented code, or one of
``ClientErrorCode`` when the server gave none), ``status`` (the HTTP status; 0 when no
answer came — refused before any request, network failure, timeout — or the WebSocket
close code for a stream) and ``problem`` (the ``application/problem+json`` body, or None).

Branch on ``code``, never on ``detail``.
"""

from __future__ import annotations

import builtins
from enum import Enum


class ClientErrorCode(str, Enum):
    """Codes the client produces itself; server codes are used verbatim. Each member is the
    string itself (``ClientErrorCode.TIMEOUT == "TIMEOUT"``, ``str()`` gives the code)."""

    __str__ = str.__str__
    __format__ = str.__format__

    NETWORK_ERROR = "NETWORK_ERROR"  # no answer: refused, reset, DNS
    TIMEOUT = "TIMEOUT"  # no answer within the call's timeout
    HTTP_ERROR = "HTTP_ERROR"  # an error status whose body is not a problem document
    INVALID_RESPONSE = "INVALID_RESPONSE"  # a 2xx whose body is not the promised JSON
    STREAM_UNAVAILABLE = "STREAM_UNAVAILABLE"  # the event stream gave up reconnecting
    ORIGIN_NOT_ALLOWED = "ORIGIN_NOT_ALLOWED"  # WebSocket close 4403


class SparkTideError(Exception):
    def __init__(
        self, code: str, status: int = 0, detail: str = "", problem: dict | None = None
    ) -> None:
        self.code = str(code)
        self.status = status
        self.detail = detail
        self.problem = problem
        super().__init__(
            f"{self.code} ({status}): {detail}" if detail else f"{self.code} ({status})"
        )


class InvalidCitationIdError(SparkTideError, ValueError):
    """The ID is not a platform ``cite_`` ID: refused before any request was made."""

    def __init__(self) -> None:
        super().__init__(
            "CITATION_NOT_AVAILABLE",
            0,
            "Not a platform citation ID; only cite_ IDs issued by this run can be previewed.",
        )


class NetworkError(SparkTideError):
    """No HTTP answer arrived (the request may or may not have reached the server)."""


class RequestTimeoutError(NetworkError, builtins.TimeoutError):
    """No answer within the call's timeout. Not retried."""


class InvalidResponseError(SparkTideError):
    """A success status whose body is not the JSON the contract promises."""


class StreamError(SparkTideError):
    """The WebSocket event stream gave up; ``status`` is the close code (or 0)."""


class ApiError(SparkTideError):
    """The server answered an error status; ``problem`` is its problem+json body."""


class BadRequestError(ApiError):  # 400
    pass


class AuthenticationError(ApiError):  # 401
    pass


class PermissionDeniedError(ApiError):  # 403
    pass


class NotFoundError(ApiError):  # 404
    pass


class ConflictError(ApiError):  # 409
    pass


class GoneError(ApiError):  # 410
    pass


class UnprocessableError(ApiError):  # 422
    pass


class ServerError(ApiError):  # 5xx, and 408 from a remote source
    pass


_BY_STATUS: dict[int, type[ApiError]] = {
    400: BadRequestError,
    401: AuthenticationError,
    403: PermissionDeniedError,
    404: NotFoundError,
    409: ConflictError,
    410: GoneError,
    422: UnprocessableError,
}


def api_error(status: int, problem: dict | None, reason: str = "") -> ApiError:
    """The typed error of one error response."""
    cls = _BY_STATUS.get(status) or (ServerError if status >= 500 or status == 408 else ApiError)
    if isinstance(problem, dict) and isinstance(problem.get("code"), str):
        detail = problem.get("detail")
        return cls(problem["code"], status, detail if isinstance(detail, str) else "", problem)
    return cls(ClientErrorCode.HTTP_ERROR, status, reason or f"HTTP {status}", None)
