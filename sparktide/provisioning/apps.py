from django.apps import AppConfig


class ProvisioningConfig(AppConfig):
    name = "sparktide.provisioning"
    label = "provisioning"
    verbose_name = "Provisioning"
