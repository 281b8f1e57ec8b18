from channels.routing import URLRouter

websocket_urlpatterns: list = []

websocket_application = URLRouter(websocket_urlpatterns)
