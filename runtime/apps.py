from django.apps import AppConfig
from django.utils.translation import gettext_lazy as _


class RuntimeConfig(AppConfig):
    """The execution engine: no models of its own; it owns the worker, recovery and
    archive commands (``run_worker``, ``recover_runs``, ``archive_runs``)."""

    name = "runtime"
    verbose_name = _("运行时")
