from django.apps import AppConfig
from django.utils.translation import pgettext_lazy


class RuntimeConfig(AppConfig):
    """The execution engine: no models of its own; it owns the worker, recovery and
    archive commands (``run_worker``, ``recover_runs``, ``archive_runs``)."""

    name = "runtime"
    verbose_name = pgettext_lazy("app", "运行时")
