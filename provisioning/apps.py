from django.apps import AppConfig
from django.utils.translation import pgettext_lazy


class ProvisioningConfig(AppConfig):
    name = "provisioning"
    label = "provisioning"
    verbose_name = pgettext_lazy("app", "配置清单")
