from django.apps import AppConfig


class TenancyConfig(AppConfig):
    name = "tenancy"
    label = "tenancy"
    verbose_name = "Tenancy"

    def ready(self) -> None:
        from tenancy import schema  # noqa: F401  (registers the OpenAPI extension)
