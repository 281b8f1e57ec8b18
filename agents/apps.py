from django.apps import AppConfig


class AgentsConfig(AppConfig):
    name = "agents"
    label = "agents"
    verbose_name = "Agents"

    def ready(self) -> None:
        from agents import signals  # noqa: F401
