from django.apps import AppConfig


class ConsoleConfig(AppConfig):
    name = "sparktide.console"
    label = "console"
    verbose_name = "Console"
