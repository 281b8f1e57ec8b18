from django.apps import AppConfig
from django.utils.translation import gettext_lazy as _


class RunsConfig(AppConfig):
    name = "runs"
    verbose_name = _("运行")
