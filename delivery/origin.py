"""Who may open a run's WebSocket from a page: the cross-site hijacking check, before
any session or database work (docs/events.md, "Origin")."""

from urllib.parse import urlsplit

from django.conf import settings
from django.http.request import split_domain_port, validate_host

from delivery.protocol import CLOSE_ORIGIN_REFUSED, ASGIApp, Receive, Scope, Send


def _header(scope: Scope, name: bytes) -> str | None:
    for key, value in scope.get("headers", []):
        if key == name:
            return str(value.decode("latin1"))
    return None


def origin_allowed(origin: str | None, host: str | None) -> bool:
    """May a page of ``origin`` open this socket (cross-site WebSocket hijacking)?

    Browsers always send Origin on a WebSocket handshake, so a handshake
    without one is not a page of another site and cannot ride on the console's
    cookie; it is let through to authenticate like any other client. A page's
    origin passes when it is this site (same host as the request, itself an
    allowed host), a host in ALLOWED_HOSTS, or listed in CORS_ALLOWED_ORIGINS (SDK
    pages on other origins) or CSRF_TRUSTED_ORIGINS (the console behind a proxy).
    A wildcard ALLOWED_HOSTS entry never admits other sites' pages.
    """
    if origin is None:
        return True
    parts = urlsplit(origin.strip().lower())
    if parts.scheme not in ("http", "https") or not parts.hostname:
        return False  # includes the opaque "null" origin of sandboxed frames and files
    listed = [*settings.CSRF_TRUSTED_ORIGINS, *settings.CORS_ALLOWED_ORIGINS]
    if f"{parts.scheme}://{parts.netloc}" in {o.lower() for o in listed}:
        return True
    allowed = list(settings.ALLOWED_HOSTS)
    if settings.DEBUG and not allowed:
        allowed = [".localhost", "127.0.0.1", "[::1]"]
    origin_domain, _ = split_domain_port(parts.netloc)  # keeps [::1] bracketed
    if validate_host(origin_domain, [h for h in allowed if h != "*"]):
        return True
    if host is None:
        return False
    domain, _ = split_domain_port(host.lower())
    return parts.netloc == host.lower() and bool(domain) and validate_host(domain, allowed)


class OriginGuard:
    """ASGI middleware refusing cross-site pages before any session or database work.

    The handshake is accepted and at once closed with 4403 and no frame, so a
    browser client can tell "refused" from a network failure and stop
    retrying, while the refused page receives no data at all.
    """

    def __init__(self, application: ASGIApp) -> None:
        self.application = application

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "websocket" and not origin_allowed(
            _header(scope, b"origin"), _header(scope, b"host")
        ):
            message = await receive()
            if message["type"] == "websocket.connect":
                await send({"type": "websocket.accept"})
                await send({"type": "websocket.close", "code": CLOSE_ORIGIN_REFUSED})
            return None
        return await self.application(scope, receive, send)
