"""WebSocket routes. Origin is checked first, before any session is loaded;
then the console session (if any) is resolved for the consumer."""

from channels.auth import AuthMiddlewareStack
from channels.routing import URLRouter
from django.urls import re_path

from runs.delivery.consumers import NotFoundConsumer, OriginGuard, RunEventsConsumer

websocket_urlpatterns: list = [
    re_path(
        r"^ws/v1/apps/(?P<app>[^/]{1,100})/runs/(?P<run_id>[^/]{1,40})/events$",
        RunEventsConsumer.as_asgi(),
    ),
    re_path(r"", NotFoundConsumer.as_asgi()),
]

websocket_application = OriginGuard(AuthMiddlewareStack(URLRouter(websocket_urlpatterns)))
