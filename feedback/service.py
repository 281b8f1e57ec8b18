"""Giving and reading feedback: the rules (whose, which block, one per target) live here."""

from collections.abc import Iterable
from typing import Any

from django.contrib.auth.models import User
from django.db.models import Count, Q
from django.utils import timezone
from django.utils.translation import gettext as _

from feedback.models import Feedback
from foundation.errors import ErrorCode, SparkTideError
from publication.models import AnswerBlock
from runs.models import Run


def give_feedback(
    run: Run, *, owner: User, rating: str, note: str = "", block_id: str | None = None
) -> Feedback:
    """Store ``owner``'s feedback on ``run`` (or on its block ``block_id``), replacing
    the one given before on the same target. The caller has already checked that
    ``owner`` owns the run (runs.access.access_run_for_owner)."""
    if rating not in Feedback.Rating.values:
        raise SparkTideError(ErrorCode.INVALID_REQUEST, _("rating: 必须是 up 或 down。"))
    block = None
    if block_id is not None:
        block = AnswerBlock.objects.filter(run=run, pk=block_id).first()
        if block is None:
            raise SparkTideError(ErrorCode.INVALID_REQUEST, _("block: 此运行中没有该回答块。"))
    # Two PUTs of the same target at once: update_or_create's create meets the unique
    # constraint, reads the other's row and updates it, so the last one wins.
    found, _created = Feedback.objects.update_or_create(
        run=run,
        block=block,
        owner=owner,
        defaults={"rating": rating, "note": note, "updated_at": timezone.now()},
    )
    return found


def run_feedback(run: Run) -> list[Feedback]:
    """The feedback given on ``run``, oldest first (run-level and per block)."""
    return list(
        Feedback.objects.filter(run=run).select_related("block").order_by("created_at", "id")
    )


def public_feedback(item: Feedback) -> dict[str, Any]:
    return {
        "rating": item.rating,
        "note": item.note,
        "block": item.block_id,
        "createdAt": item.created_at.isoformat(),
        "updatedAt": item.updated_at.isoformat(),
    }


def counts_by_agent_version(version_ids: Iterable[int]) -> dict[int, tuple[int, int]]:
    """(👍, 👎) given on runs of each agent version, in one query whatever the number."""
    rows = (
        Feedback.objects.filter(run__agent_version_id__in=list(version_ids))
        .values("run__agent_version_id")
        .annotate(
            up=Count("id", filter=Q(rating=Feedback.Rating.UP)),
            down=Count("id", filter=Q(rating=Feedback.Rating.DOWN)),
        )
        .order_by()
    )
    return {row["run__agent_version_id"]: (row["up"], row["down"]) for row in rows}
