"""sparktide-client: the Python client of the SparkTide API (docs/sdk.md)."""

from sparktide_client.aio import AsyncClient, AsyncEventPager
from sparktide_client.client import Client, EventPager
from sparktide_client.errors import (
    ApiError,
    AuthenticationError,
    BadRequestError,
    ClientErrorCode,
    ConflictError,
    GoneError,
    InvalidCitationIdError,
    InvalidResponseError,
    NetworkError,
    NotFoundError,
    PermissionDeniedError,
    RequestTimeoutError,
    ServerError,
    SparkTideError,
    StreamError,
    UnprocessableError,
)
from sparktide_client.ids import is_citation_id
from sparktide_client.segments import (
    RunCitations,
    answer_segments,
    content_text,
    find_markers,
    split_streaming,
    verified_citations,
)

__all__ = [
    "ApiError",
    "AsyncClient",
    "AsyncEventPager",
    "AuthenticationError",
    "BadRequestError",
    "Client",
    "ClientErrorCode",
    "ConflictError",
    "EventPager",
    "GoneError",
    "InvalidCitationIdError",
    "InvalidResponseError",
    "NetworkError",
    "NotFoundError",
    "PermissionDeniedError",
    "RequestTimeoutError",
    "ServerError",
    "SparkTideError",
    "StreamError",
    "RunCitations",
    "UnprocessableError",
    "answer_segments",
    "content_text",
    "find_markers",
    "is_citation_id",
    "split_streaming",
    "verified_citations",
]
