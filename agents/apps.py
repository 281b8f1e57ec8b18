from django.apps import AppConfig
from django.utils.translation import pgettext_lazy


class AgentsConfig(AppConfig):
    name = "agents"
    label = "agents"
    verbose_name = pgettext_lazy("app", "智能体")

    def ready(self) -> None:
        from agents import signals  # noqa: F401
