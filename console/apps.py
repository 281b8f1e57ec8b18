from django.apps import AppConfig
from django.utils.translation import pgettext_lazy


class ConsoleConfig(AppConfig):
    name = "console"
    label = "console"
    verbose_name = pgettext_lazy("app", "控制台")
