from django.apps import AppConfig


class KnowledgeConfig(AppConfig):
    name = "sparktide.knowledge"
    label = "knowledge"
    verbose_name = "Knowledge"
