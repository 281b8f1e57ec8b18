from django.apps import AppConfig
from django.utils.translation import pgettext_lazy


class CitationsConfig(AppConfig):
    name = "citations"
    verbose_name = pgettext_lazy("app", "引用")
