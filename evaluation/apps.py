from django.apps import AppConfig
from django.utils.translation import pgettext_lazy


class EvaluationConfig(AppConfig):
    """Evaluation sets, ``manage.py evaluate`` and kept evaluations (docs/evaluation.md)."""

    name = "evaluation"
    verbose_name = pgettext_lazy("app", "回答评测")
