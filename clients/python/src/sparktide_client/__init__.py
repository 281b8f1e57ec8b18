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
    "UnprocessableError",
    "is_citation_id",
]
