from django.apps import AppConfig
from django.utils.translation import pgettext_lazy


class RunsConfig(AppConfig):
    name = "runs"
    verbose_name = pgettext_lazy("app", "运行")
