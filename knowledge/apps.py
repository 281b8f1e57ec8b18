from django.apps import AppConfig


class KnowledgeConfig(AppConfig):
    name = "knowledge"
    label = "knowledge"
    verbose_name = "Knowledge"
