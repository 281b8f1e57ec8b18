from django.apps import AppConfig


class EvaluationConfig(AppConfig):
    """Evaluation sets, ``manage.py evaluate`` and kept evaluations (docs/evaluation.md)."""

    name = "evaluation"
    verbose_name = "Answer evaluation"
