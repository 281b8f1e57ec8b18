from django.apps import AppConfig
from django.utils.translation import gettext_lazy as _


class RunsConfig(AppConfig):
    name = "runs"
    verbose_name = _("运行")

    def ready(self) -> None:
        # The composition root: the event log wakes delivery without importing it.
        from runs.delivery.wakeups import wake_run
        from runs.events import register_waker

        register_waker(wake_run)
