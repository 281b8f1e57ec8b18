from django.apps import AppConfig


class TenancyConfig(AppConfig):
    name = "sparktide.tenancy"
    label = "tenancy"
    verbose_name = "Tenancy"

    def ready(self) -> None:
        from sparktide.tenancy import schema  # noqa: F401  (registers the OpenAPI extension)
