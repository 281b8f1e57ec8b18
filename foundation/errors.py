"""The one error type of SparkTide and its rendering as RFC 9457 problem details.

Domain code only raises ``SparkTideError(code, detail=…)``: the code carries its
HTTP status and a default detail, so a raise site names *what* went wrong, never
the status. The DRF exception handler below, the /v1 middleware
(sparktide/middleware.py) for everything DRF never sees, and the WebSocket
consumer turn it into ``application/problem+json`` or an error frame. Every code
is documented in docs/errors.md and the OpenAPI schema.

``detail`` is human text in the request's language (``Accept-Language``,
zh-hans by default; the catalog is locale/en); ``code`` is never translated.
"""

from enum import StrEnum
from http import HTTPStatus
from typing import Any, cast

from django.core.exceptions import RequestDataTooBig
from django.http import Http404, JsonResponse
from django.utils.translation import gettext_lazy as _
from rest_framework import exceptions as drf_exceptions
from rest_framework import serializers
from rest_framework.response import Response
from rest_framework.views import exception_handler as drf_exception_handler

PROBLEM_MEDIA_TYPE = "application/problem+json"


class ErrorCode(StrEnum):
    """A documented error code, bound to its HTTP status and a default detail.

    The string value is the code on the wire. One wire code may have two
    members when the contract gives it two statuses (CAPABILITY_UNAVAILABLE:
    409 for a revoked version, 503 for a lease that is not current): each
    member still fixes its own status, and both render the same ``code``.
    """

    status: int
    default_detail: str

    def __new__(cls, wire: str, status: int, detail: str, variant: str = "") -> "ErrorCode":
        member = str.__new__(cls, wire)
        # Distinct values keep a variant from collapsing into an alias of the
        # first member with the same wire code.
        member._value_ = f"{wire}#{variant}" if variant else wire
        member.status = status
        member.default_detail = detail
        return member

    def __str__(self) -> str:
        return str.__str__(self)

    __hash__ = str.__hash__

    @classmethod
    def _missing_(cls, value: object) -> "ErrorCode | None":
        # ErrorCode("CAPABILITY_UNAVAILABLE") finds the member without a variant.
        return next((m for m in cls if str(m) == value), None)

    @property
    def wire(self) -> str:
        return str.__str__(self)

    # Requests
    AUTHENTICATION_REQUIRED = "AUTHENTICATION_REQUIRED", 401, _("需要有效的 bearer 令牌。")
    INVALID_REQUEST = "INVALID_REQUEST", 400, _("请求无效。")
    METHOD_NOT_ALLOWED = "METHOD_NOT_ALLOWED", 405, _("此路径不提供该 HTTP 方法。")
    RESOURCE_NOT_FOUND = "RESOURCE_NOT_FOUND", 404, _("资源不存在。")
    REQUEST_TOO_LARGE = "REQUEST_TOO_LARGE", 413, _("请求体超过上传上限。")
    UNSUPPORTED_MEDIA_TYPE = (
        "UNSUPPORTED_MEDIA_TYPE",
        415,
        _("不支持该 Content-Type，请发送 application/json。"),
    )
    INTERNAL_ERROR = "INTERNAL_ERROR", 500, _("服务器内部错误。")
    DATABASE_UNAVAILABLE = "DATABASE_UNAVAILABLE", 503, _("数据库暂时不可用，请稍后重试。")
    APP_NOT_ACTIVE = "APP_NOT_ACTIVE", 403, _("应用未处于启用状态。")
    AGENT_NOT_AVAILABLE = "AGENT_NOT_AVAILABLE", 422, _("此应用中没有固定该智能体。")
    RUN_ALREADY_FINISHED = "RUN_ALREADY_FINISHED", 409, _("运行已经结束。")
    BUSINESS_PERMISSION_DENIED = (
        "BUSINESS_PERMISSION_DENIED",
        403,
        _("你已无权查看此应用的运行历史。"),
    )
    # Events and retention
    EVENT_CURSOR_EXPIRED = (
        "EVENT_CURSOR_EXPIRED",
        410,
        _("运行已超过保留期限，其事件和来源已不可用。"),
    )
    TICKET_INVALID = "TICKET_INVALID", 401, _("票据未知、已使用或已过期。")
    # WebSocket only: closes 4408 (docs/events.md).
    CLIENT_TOO_SLOW = "CLIENT_TOO_SLOW", 408, _("客户端确认过慢。")
    # Citations and preview
    CITATION_NOT_AVAILABLE = "CITATION_NOT_AVAILABLE", 404, _("无法预览该引用。")
    CITATION_SOURCE_CHANGED = (
        "CITATION_SOURCE_CHANGED",
        409,
        _("来源片段自运行以来已变化，请重新提问。"),
    )
    CITATION_PREVIEW_TIMED_OUT = "CITATION_PREVIEW_TIMED_OUT", 408, _("知识来源未及时响应。")
    CITATION_LIMIT_EXCEEDED = "CITATION_LIMIT_EXCEEDED", 422, _("超过引用数量上限。")
    KNOWLEDGE_ACCESS_CHANGED = (
        "KNOWLEDGE_ACCESS_CHANGED",
        409,
        _("应用的知识访问配置自运行以来已变化，请开始新的会话。"),
    )
    SECURITY_POLICY_CHANGED = (
        "SECURITY_POLICY_CHANGED",
        409,
        _("应用的安全策略自运行以来已变化，请开始新的会话。"),
    )
    KNOWLEDGE_ACCESS_DENIED = "KNOWLEDGE_ACCESS_DENIED", 403, _("你现在不能读取该来源。")
    CAPABILITY_UNAVAILABLE = (
        "CAPABILITY_UNAVAILABLE",
        503,
        _("应用对该知识版本的租约当前无效。"),
    )
    CAPABILITY_REVOKED = (
        "CAPABILITY_UNAVAILABLE",
        409,
        _("该知识版本已被撤销。"),
        "revoked",
    )
    KNOWLEDGE_SOURCE_ERROR = "KNOWLEDGE_SOURCE_ERROR", 502, _("知识来源返回了错误。")
    KNOWLEDGE_SOURCE_UNAVAILABLE = "KNOWLEDGE_SOURCE_UNAVAILABLE", 503, _("无法连接知识来源。")
    # Domain integrity
    IMMUTABLE_VERSION = "IMMUTABLE_VERSION", 409, _("已发布或已撤销的版本不可更改。")


def wire_codes() -> list[str]:
    """Every code a client can receive, once each, in declaration order."""
    return list(dict.fromkeys(str(code) for code in ErrorCode))


class SparkTideError(Exception):
    """An error with a documented ``code``; the code fixes the HTTP status."""

    def __init__(self, code: ErrorCode, detail: object = None, legacy_detail: object = None):
        if isinstance(detail, int) and not isinstance(detail, bool):
            # The former call shape SparkTideError(code, status, detail). The
            # status is the code's; a different one is a bug at the raise site.
            # (tests/foundations/test_errors.py keeps raise sites from naming it.)
            if detail != code.status:
                raise TypeError(f"{code} is always {code.status}, not {detail}")
            detail = legacy_detail
        self.code = code
        self.status = code.status
        # Kept lazy where it is a translation, so it renders in the request's language.
        self._detail = detail or code.default_detail
        super().__init__(str(code))

    @property
    def detail(self) -> str:
        return str(self._detail)

    def __str__(self) -> str:
        return f"{self.code}: {self.detail}"

    def problem(self) -> dict[str, Any]:
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
    return SparkTideError(ErrorCode.RESOURCE_NOT_FOUND)


def _headers(error: SparkTideError) -> dict[str, str]:
    if error.status == 401:
        return {"WWW-Authenticate": 'Bearer realm="sparktide"'}
    return {}


class ProblemResponse(Response):
    """The DRF rendering (views, the exception handler)."""

    def __init__(self, error: SparkTideError, headers: dict[str, str] | None = None) -> None:
        super().__init__(
            error.problem(),
            status=error.status,
            headers={**_headers(error), **(headers or {})},
            content_type=PROBLEM_MEDIA_TYPE,
        )


def problem_response(error: SparkTideError) -> JsonResponse:
    """The plain Django rendering, for what never reaches a DRF view."""
    return JsonResponse(
        error.problem(),
        status=error.status,
        headers=_headers(error),
        content_type=PROBLEM_MEDIA_TYPE,
        json_dumps_params={"ensure_ascii": False},
    )


# What DRF and Django raise, mapped to our codes (the first match wins).
_FOREIGN: list[tuple[type[Exception] | tuple[type[Exception], ...], ErrorCode]] = [
    (
        (drf_exceptions.NotAuthenticated, drf_exceptions.AuthenticationFailed),
        ErrorCode.AUTHENTICATION_REQUIRED,
    ),
    (drf_exceptions.MethodNotAllowed, ErrorCode.METHOD_NOT_ALLOWED),
    (
        (drf_exceptions.NotFound, drf_exceptions.PermissionDenied, Http404),
        ErrorCode.RESOURCE_NOT_FOUND,
    ),
    (drf_exceptions.UnsupportedMediaType, ErrorCode.UNSUPPORTED_MEDIA_TYPE),
    (RequestDataTooBig, ErrorCode.REQUEST_TOO_LARGE),
    ((drf_exceptions.ValidationError, drf_exceptions.ParseError), ErrorCode.INVALID_REQUEST),
]

# Codes whose detail is always the code's own (never DRF's text): a 404 must be
# identical whether or not the thing exists, and the 401 names no cause.
_OWN_DETAIL = frozenset({ErrorCode.RESOURCE_NOT_FOUND, ErrorCode.AUTHENTICATION_REQUIRED})


def as_problem(exc: Exception) -> SparkTideError | None:
    """The SparkTideError a DRF or Django exception stands for, or None."""
    if isinstance(exc, SparkTideError):
        return exc
    for types, code in _FOREIGN:
        if isinstance(exc, types):
            if code in _OWN_DETAIL or isinstance(exc, RequestDataTooBig):
                return SparkTideError(code)
            if code is ErrorCode.UNSUPPORTED_MEDIA_TYPE:
                return SparkTideError(code)
            # Every other foreign type above is a DRF APIException.
            detail = cast(drf_exceptions.APIException, exc).detail
            return SparkTideError(code, _flatten(detail))
    return None


def _flatten(detail: object, prefix: str = "") -> str:
    if isinstance(detail, dict):
        return "; ".join(_flatten(v, f"{prefix}{k}: ") for k, v in detail.items())
    if isinstance(detail, list):
        return "; ".join(_flatten(v, prefix) for v in detail)
    return f"{prefix}{detail}"


def problem_exception_handler(exc: Exception, context: dict[str, Any]) -> Response | None:
    error = as_problem(exc)
    if error is None:
        if isinstance(exc, drf_exceptions.APIException):
            # Throttled and other DRF errors we do not raise: still one shape.
            error = SparkTideError(ErrorCode.INVALID_REQUEST, _flatten(exc.detail))
        else:
            # Not ours: the /v1 middleware logs it and answers INTERNAL_ERROR.
            return drf_exception_handler(exc, context)
    return ProblemResponse(error)


class ProblemSerializer(serializers.Serializer[Any]):
    """RFC 9457 problem details with SparkTide's ``code`` member."""

    type = serializers.CharField()
    title = serializers.CharField()
    status = serializers.IntegerField()
    code = serializers.ChoiceField(choices=wire_codes())
    detail = serializers.CharField()
