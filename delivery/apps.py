from django.apps import AppConfig
from django.utils.translation import pgettext_lazy


class DeliveryConfig(AppConfig):
    """The WebSocket delivery of the run event log: consumers, fan-out, tickets, wake-ups."""

    name = "delivery"
    verbose_name = pgettext_lazy("app", "事件投递")

    def ready(self) -> None:
        # The event log wakes delivery through a waker delivery registers: the kernel
        # never imports the layer above it.
        from delivery.wakeups import send_stream, wake_run
        from runs.events import register_waker
        from runs.streams import register_stream_sender

        register_waker(wake_run)
        register_stream_sender(send_stream)
