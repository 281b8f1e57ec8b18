"""Presentation helpers of the console templates. Output is always autoescaped text."""

import json

from django import template
from django.utils.translation import gettext as _

from console import labels

register = template.Library()


def _label(table: dict, code) -> str:
    return str(table.get(str(code), code or ""))


@register.filter
def status_label(code) -> str:
    return _label(labels.RUN_STATUS, code)


@register.filter
def hint_label(code) -> str:
    return _label(labels.SOURCE_HINT, code or "unknown")


@register.filter
def outcome_label(code) -> str:
    return _label(labels.OUTCOME, code)


@register.filter
def rejection_label(code) -> str:
    return _label(labels.REJECTION, code)


@register.filter
def effect_label(code) -> str:
    return _label(labels.EFFECT, code)


@register.filter
def event_label(code) -> str:
    return _label(labels.EVENT_TYPE, code)


@register.filter
def journal_label(code) -> str:
    return _label(labels.JOURNAL_KIND, code)


@register.filter
def event_tone(event_type: str) -> str:
    """A CSS modifier per event family (colour of the type pill)."""
    if event_type in ("run.completed", "answer.published", "citation.verified"):
        return "ok"
    if event_type in ("run.failed", "answer.rejected"):
        return "bad"
    if event_type in ("run.partial", "answer.preview", "run.cancelled"):
        return "warn"
    if event_type == "citation.created":
        return "info"
    return "muted"


@register.filter
def pretty_json(value) -> str:
    return json.dumps(value, ensure_ascii=False, indent=2, sort_keys=True)


@register.filter
def source_location(source_ref) -> str:
    """ "第 2 页 · 位置 120–380" from a public sourceRef."""
    if not isinstance(source_ref, dict):
        return ""
    parts = []
    if source_ref.get("page") is not None:
        parts.append(_("第 %(page)s 页") % {"page": source_ref["page"]})
    locator = source_ref.get("locator")
    if isinstance(locator, dict) and "start" in locator and "end" in locator:
        parts.append(_("位置 %(start)s–%(end)s") % locator)
    return " · ".join(parts)


@register.filter
def event_summary(event: dict) -> str:
    """One line saying what an event is about (never the answer body)."""
    data = event.get("data") or {}
    kind = event.get("type", "")
    if kind in ("agent.started", "agent.completed"):
        name = str(data.get("agent", ""))
        if data.get("agentVersion"):
            name += f"@{data['agentVersion']}"
        parts = [name, data.get("agentCallId", ""), f"depth {data.get('depth', '')}"]
        return " · ".join(str(p) for p in [*parts, data.get("status", "")] if p)
    if kind == "citation.created":
        location = source_location(data.get("sourceRef"))
        return " · ".join(
            p
            for p in (
                data.get("title", ""),
                f"{data.get('knowledgeId', '')}@{data.get('knowledgeVersion', '')}",
                location,
            )
            if p
        )
    if kind == "answer.preview":
        target = data.get("publicationId") or data.get("candidateId", "")
        return f"{target} r{data.get('revision', '')} · {_('未保存')}"
    if kind == "answer.published":
        state = (
            _("受保护") if data.get("state") == "protected" else hint_label(data.get("sourceHint"))
        )
        return (
            f"{data.get('publicationId', '')} r{data.get('revision', '')} · "
            f"#{data.get('deliveryOrdinal', '')} · {data.get('outcome', '')} · {state}"
        )
    if kind == "answer.rejected":
        target = data.get("publicationId") or data.get("candidateId", "")
        return (
            f"{data.get('code', '')} ({rejection_label(data.get('code'))}) · "
            f"{effect_label(data.get('effect'))} · {target}"
        )
    if kind == "citation.verified":
        refs = data.get("references") or []
        verified = sum(1 for r in refs if r.get("status") == "VERIFIED")
        return f"{data.get('agentCallId', '')} · " + _(
            "已核验 %(verified)s 个，未核验 %(unverified)s 个"
        ) % {"verified": verified, "unverified": len(refs) - verified}
    if kind.startswith("run.") and kind != "run.started":
        return " · ".join(p for p in (data.get("status", ""), data.get("reason", "")) if p)
    return ""


@register.filter
def duration(run) -> str:
    """Seconds from start (or creation) to completion, e.g. "3.4 s"."""
    start = run.started_at or run.created_at
    if not run.completed_at or not start:
        return ""
    seconds = (run.completed_at - start).total_seconds()
    return f"{seconds:.1f} s" if seconds < 100 else f"{seconds:.0f} s"


@register.filter
def percent_of(value, total) -> int:
    """Width class step (0–100, by 5) of a progress bar: value out of total."""
    try:
        share = float(value or 0) / float(total)
    except (TypeError, ValueError, ZeroDivisionError):
        return 0
    return max(0, min(100, int(round(share * 20)) * 5))
