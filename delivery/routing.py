"""WebSocket routes. Origin is checked first, before any session is loaded;
then the console session (if any) is resolved for the consumer."""

from channels.auth import AuthMiddlewareStack
from channels.routing import URLRouter
from django.urls import URLPattern, re_path

from delivery.consumers import NotFoundConsumer, RunEventsConsumer
from delivery.origin import OriginGuard

websocket_urlpatterns: list[URLPattern] = [
    # No NUL in a segment: PostgreSQL cannot compare text with it, so such a path
    # is the NotFoundConsumer's 4404, never a DataError (an HTTP 500 handshake).
    re_path(
        r"^ws/v1/apps/(?P<app>[^/\x00]{1,100})/runs/(?P<run_id>[^/\x00]{1,40})/events$",
        RunEventsConsumer.as_asgi(),
    ),
    re_path(r"", NotFoundConsumer.as_asgi()),
]

websocket_application = OriginGuard(AuthMiddlewareStack(URLRouter(websocket_urlpatterns)))
