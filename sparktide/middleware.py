"""Every error of ``/v1/…`` is problem+json, including those DRF never sees.

DRF's exception handler (foundation/errors.py) renders what a view raises. This
middleware covers the rest of the API's surface with the same codes: a path no
route matches (404, a trailing slash included), a body over
``DATA_UPLOAD_MAX_MEMORY_SIZE`` (413, read here before any view parses it), an
exception no one handled (500 INTERNAL_ERROR, logged, no traceback in the body),
and any other non-problem error response Django produces on its own. A request
Django refuses before this middleware runs (a ``Host`` outside ``ALLOWED_HOSTS``,
checked by the security middleware in front of it) reaches ``bad_request``, the
project's ``handler400``: problem+json on /v1 as well.
"""

import logging
from collections.abc import Callable

from django.core.exceptions import RequestDataTooBig
from django.db import InterfaceError, OperationalError
from django.http import HttpRequest, HttpResponse
from django.views import defaults

from foundation.errors import PROBLEM_MEDIA_TYPE, ErrorCode, SparkTideError, problem_response

logger = logging.getLogger("sparktide.api")

API_PREFIX = "/v1/"

# A Django error response on /v1 that is not problem+json yet, by status.
_BY_STATUS = {
    400: ErrorCode.INVALID_REQUEST,
    401: ErrorCode.AUTHENTICATION_REQUIRED,
    404: ErrorCode.RESOURCE_NOT_FOUND,
    405: ErrorCode.METHOD_NOT_ALLOWED,
    413: ErrorCode.REQUEST_TOO_LARGE,
    415: ErrorCode.UNSUPPORTED_MEDIA_TYPE,
}


def is_api(request: HttpRequest) -> bool:
    return request.path_info.startswith(API_PREFIX)


class ApiProblemMiddleware:
    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        if not is_api(request):
            return self.get_response(request)
        try:
            # Read (and bound) the body once, here: RequestDataTooBig raised
            # later, inside a parser, would reach Django's HTML 400 page.
            request.body  # noqa: B018
        except RequestDataTooBig:
            return problem_response(SparkTideError(ErrorCode.REQUEST_TOO_LARGE))
        response = self.get_response(request)
        if response.status_code >= 400 and not response.get("Content-Type", "").startswith(
            PROBLEM_MEDIA_TYPE
        ):
            code = _BY_STATUS.get(response.status_code)
            if code is None:
                code = (
                    ErrorCode.INTERNAL_ERROR
                    if response.status_code >= 500
                    else ErrorCode.INVALID_REQUEST
                )
            rendered = problem_response(SparkTideError(code))
            for header in ("Allow", "Cache-Control", "WWW-Authenticate"):
                if header in response:
                    rendered[header] = response[header]
            return rendered
        return response

    def process_exception(self, request: HttpRequest, exc: Exception) -> HttpResponse | None:
        if not is_api(request):
            return None
        if isinstance(exc, SparkTideError):
            return problem_response(exc)
        if isinstance(exc, OperationalError | InterfaceError):
            # The database went away under this request (a failover, a restart, a cut
            # session): expected, so no traceback. The pool checks the connection it
            # hands the next request, so the client may simply retry.
            logger.warning("database unavailable on %s %s: %s", request.method, request.path, exc)
            response = problem_response(SparkTideError(ErrorCode.DATABASE_UNAVAILABLE))
            response["Retry-After"] = "1"
            return response
        logger.error("unhandled error on %s %s", request.method, request.path, exc_info=exc)
        return problem_response(SparkTideError(ErrorCode.INTERNAL_ERROR))


def bad_request(request: HttpRequest, exception: Exception) -> HttpResponse:
    """``handler400``: a request Django refuses as suspicious, problem+json on /v1."""
    if is_api(request):
        return problem_response(SparkTideError(ErrorCode.INVALID_REQUEST))
    return defaults.bad_request(request, exception)
