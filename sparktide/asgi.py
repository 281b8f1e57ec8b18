import os

from django.core.asgi import get_asgi_application

from foundation.reason_phrases import complete_reason_phrases

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "sparktide.settings")
django_asgi_app = get_asgi_application()
complete_reason_phrases()  # a 422 is "Unprocessable Content", not "Unknown Status"

from channels.routing import ProtocolTypeRouter  # noqa: E402
from django.conf import settings  # noqa: E402

from delivery.routing import websocket_application  # noqa: E402

application = ProtocolTypeRouter({"http": django_asgi_app, "websocket": websocket_application})

if settings.SPARKTIDE_INPROCESS_WORKER:
    from delivery.wakeups import RememberServerLoop
    from runtime.workers import start_worker

    application = RememberServerLoop(application)
    start_worker()
