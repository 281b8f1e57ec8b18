from django.apps import AppConfig
from django.utils.translation import pgettext_lazy


class KnowledgeConfig(AppConfig):
    name = "knowledge"
    label = "knowledge"
    verbose_name = pgettext_lazy("app", "知识库")
