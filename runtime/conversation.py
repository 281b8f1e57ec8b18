"""A conversation: the earlier turns of a run's ``sessionId``, for its provider.

Runs of one business session — the same ``sessionId``, owner and app — form a conversation.
When a run starts, its root agent call is given the earlier turns: each earlier run's question
and its committed answer, read through Publication's reader (the owner's *current*
authorization: a block whose source was revoked is left out, as it would be from the answer
endpoint). Never raw events, never previews, never another owner's runs.

Bounded: the last ``MAX_TURNS`` runs that ended with an answer (COMPLETED or PARTIAL, within
the app's retention — runs/retention.py, as for their events and answer), oldest first; each answer cut to ``MAX_ANSWER_CHARS`` characters. Citation,
numeric and block markers are removed from the answer text: an earlier run's IDs belong to
that run and could never be verified in this one.
"""

import re
from typing import Any

from citations.markers import ANY_MARKER
from publication.reader import VISIBLE, RunReader
from runs.models import Run
from runs.retention import within_retention

MAX_TURNS = 5
MAX_ANSWER_CHARS = 2000
# A marker and the spaces that set it off from the text before it.
_MARKER = re.compile(r"[ \t]*(?:" + ANY_MARKER.pattern + ")")


def _answer_text(run: Run) -> str:
    parts = []
    for view in RunReader(run).blocks():
        if view.state != VISIBLE or not view.content:
            continue
        content = view.content
        if content.get("type") == "text":
            parts.append(content["text"])
        else:
            rows = [content.get("columns", []), *content.get("rows", [])]
            parts.append("\n".join(" | ".join(row) for row in rows))
    text = _MARKER.sub("", "\n\n".join(parts))
    text = "\n".join(line.rstrip() for line in text.split("\n")).strip()
    return text[:MAX_ANSWER_CHARS]


def conversation_history(run: Run, *, limit: int = MAX_TURNS) -> list[dict[str, Any]]:
    """``[{"question", "answer", "runId"}]`` of the session's earlier runs, oldest first."""
    if not run.session_id:
        return []
    earlier = list(
        Run.objects.filter(
            within_retention(run.app),
            app_id=run.app_id,
            owner_id=run.owner_id,
            session_id=run.session_id,
            created_at__lt=run.created_at,
            status__in=(Run.Status.COMPLETED, Run.Status.PARTIAL),
        )
        .exclude(pk=run.pk)
        .select_related("tenant", "app", "owner")
        .order_by("-created_at", "-pk")[:limit]
    )
    return [
        {"runId": r.pk, "question": r.input, "answer": _answer_text(r)} for r in reversed(earlier)
    ]
