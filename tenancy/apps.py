from django.apps import AppConfig
from django.utils.translation import pgettext_lazy


class TenancyConfig(AppConfig):
    name = "tenancy"
    label = "tenancy"
    verbose_name = pgettext_lazy("app", "租户与应用")

    def ready(self) -> None:
        from tenancy import schema  # noqa: F401  (registers the OpenAPI extension)
