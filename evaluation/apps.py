from django.apps import AppConfig


class EvaluationConfig(AppConfig):
    """Evaluation sets and ``manage.py evaluate`` (docs/evaluation.md). No models."""

    name = "evaluation"
    verbose_name = "Answer evaluation"
