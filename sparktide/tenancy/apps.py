from django.apps import AppConfig


class TenancyConfig(AppConfig):
    name = "sparktide.tenancy"
    label = "tenancy"
    verbose_name = "Tenancy"
