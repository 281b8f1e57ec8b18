import os

from django.core.asgi import get_asgi_application

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "sparktide.settings")
django_asgi_app = get_asgi_application()

from channels.routing import ProtocolTypeRouter  # noqa: E402
from django.conf import settings  # noqa: E402

from runs.routing import websocket_application  # noqa: E402

application = ProtocolTypeRouter({"http": django_asgi_app, "websocket": websocket_application})

if settings.SPARKTIDE_INPROCESS_WORKER:
    from runs import inprocess

    application = inprocess.RememberServerLoop(application)
    inprocess.start_worker()
