from django.apps import AppConfig


class AgentsConfig(AppConfig):
    name = "sparktide.agents"
    label = "agents"
    verbose_name = "Agents"

    def ready(self) -> None:
        from sparktide.agents import signals  # noqa: F401
