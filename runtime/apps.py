from django.apps import AppConfig
from django.utils.translation import pgettext_lazy


class RuntimeConfig(AppConfig):
    """The execution engine: no models of its own; it owns the worker, recovery and
    archive commands (``run_worker``, ``recover_runs``, ``archive_runs``)."""

    name = "runtime"
    verbose_name = pgettext_lazy("app", "运行时")

    def ready(self) -> None:
        from django.apps import apps

        # django_tasks_db names its app in English only; the admin (runtime/admin.py)
        # shows it in the admin's language.
        tasks = apps.get_app_config("django_tasks_database")
        tasks.verbose_name = pgettext_lazy("app", "后台任务")
