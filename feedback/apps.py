from django.apps import AppConfig
from django.utils.translation import gettext_lazy as _


class FeedbackConfig(AppConfig):
    """An owner's 👍/👎 and note on a run or one of its answer blocks (docs/api.md, Feedback)."""

    name = "feedback"
    verbose_name = _("反馈")
