"""Presentation helpers of the console templates. Output is always autoescaped text."""

import json
from typing import Any

from django import template
from django.utils.translation import gettext as _

from console import labels
from console.detail import block_badge

register = template.Library()


def _label(table: dict[str, Any], code: object) -> str:
    return str(table.get(str(code), code or ""))


@register.filter
def status_label(code: object) -> str:
    return _label(labels.RUN_STATUS, code)


@register.filter
def reason_label(code: object) -> str:
    """Why a run ended, in words: a run reason, or the detail of the error code it carries."""
    return _label(labels.run_reasons(), code)


@register.filter
def hint_label(code: object) -> str:
    return _label(labels.SOURCE_HINT, code or "unknown")


@register.filter
def outcome_label(code: object) -> str:
    return _label(labels.OUTCOME, code)


@register.filter
def rejection_label(code: object) -> str:
    return _label(labels.REJECTION, code)


@register.filter
def entry_label(code: object) -> str:
    return _label(labels.ENTRY, code)


@register.filter
def effect_label(code: object) -> str:
    return _label(labels.EFFECT, code)


@register.filter
def event_label(code: object) -> str:
    return _label(labels.EVENT_TYPE, code)


@register.filter
def journal_label(code: object) -> str:
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
def pretty_json(value: object) -> str:
    return json.dumps(value, ensure_ascii=False, indent=2, sort_keys=True)


@register.filter
def source_location(source_ref: Any, paragraph: int | None = None) -> str:
    """ "第 2 页 · 第 3 段" from a public sourceRef (and the chunk's paragraph, when known):
    where a reader finds it. Offsets are for :func:`source_offsets`' details line."""
    if not isinstance(source_ref, dict):
        return ""
    parts = []
    if source_ref.get("page") is not None:
        parts.append(_("第 %(page)s 页") % {"page": source_ref["page"]})
    if paragraph is not None:
        parts.append(_("第 %(paragraph)s 段") % {"paragraph": paragraph})
    return " · ".join(parts)


@register.filter
def source_offsets(source_ref: Any) -> str:
    """ "UTF-16 位置 120–380": the locator of a public sourceRef, for a details line."""
    locator = source_ref.get("locator") if isinstance(source_ref, dict) else None
    if isinstance(locator, dict) and "start" in locator and "end" in locator:
        return _("UTF-16 位置 %(start)s–%(end)s") % {
            "start": locator["start"],
            "end": locator["end"],
        }
    return ""


@register.filter
def event_details(event: dict[str, Any]) -> str:
    """The event log's details line under a summary: a citation's offsets and chunk."""
    data = event.get("data") or {}
    if event.get("type") != "citation.created":
        return ""
    parts = [source_offsets(data.get("sourceRef"))]
    if data.get("chunkId"):
        parts.append(_("片段 %(chunk)s") % {"chunk": data["chunkId"]})
    return " · ".join(p for p in parts if p)


def _receipt_hint(event: dict[str, Any], data: dict[str, Any]) -> str:
    """A receipt's source hint as the log may state it: a claim of verified sources is
    *pending* (来源待核验) until the root call's final check, which comes later in the log."""
    hint = data.get("sourceHint")
    checked = (event.get("console") or {}).get("checked", False)
    # The block badge's rule (console/detail.py block_badge): pending until the check.
    if block_badge("visible", hint, [], checked=checked, settled=False) == "pending":
        # What the receipt claimed is in the event's JSON; the summary never repeats a
        # verified claim before the check.
        return _("来源待核验")
    return hint_label(hint)


@register.filter
def event_summary(event: dict[str, Any]) -> str:
    """One line saying what an event is about (never the answer body)."""
    data = event.get("data") or {}
    kind = event.get("type", "")
    if kind in ("agent.started", "agent.completed"):
        name = str(data.get("agent", ""))
        if data.get("agentVersion"):
            name += f"@{data['agentVersion']}"
        depth = _("深度 %(depth)s") % {"depth": data.get("depth", "")}
        status = status_label(data.get("status")) if data.get("status") else ""
        return " · ".join(str(p) for p in (name, data.get("agentCallId", ""), depth, status) if p)
    if kind == "citation.created":
        location = source_location(
            data.get("sourceRef"), (event.get("console") or {}).get("paragraph")
        )
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
        hint = _receipt_hint(event, data) if data.get("sourceHint") else ""
        return " · ".join(
            p for p in (f"{target} r{data.get('revision', '')}", _("未保存"), hint) if p
        )
    if kind == "answer.published":
        state = _("受保护") if data.get("state") == "protected" else _receipt_hint(event, data)
        return (
            f"{data.get('publicationId', '')} r{data.get('revision', '')} · "
            f"#{data.get('deliveryOrdinal', '')} · {outcome_label(data.get('outcome'))} · {state}"
        )
    if kind == "answer.rejected":
        target = data.get("publicationId") or data.get("candidateId", "")
        return (
            f"{rejection_label(data.get('code'))} · {effect_label(data.get('effect'))} · {target}"
        )
    if kind == "citation.verified":
        refs = data.get("references") or []
        verified = sum(1 for r in refs if r.get("status") == "VERIFIED")
        return f"{data.get('agentCallId', '')} · " + _(
            "已核验 %(verified)s 个，未核验 %(unverified)s 个"
        ) % {"verified": verified, "unverified": len(refs) - verified}
    if kind.startswith("run.") and kind != "run.started":
        said = (status_label(data.get("status")), reason_label(data.get("reason")))
        return " · ".join(p for p in said if p)
    return ""


@register.filter
def duration(run: Any) -> str:
    """Seconds from start (or creation) to completion, e.g. "3.4 s"."""
    start = run.started_at or run.created_at
    if not run.completed_at or not start:
        return ""
    seconds = (run.completed_at - start).total_seconds()
    return f"{seconds:.1f} s" if seconds < 100 else f"{seconds:.0f} s"


@register.filter
def percent_of(value: Any, total: Any) -> int:
    """Width class step (0–100, by 5) of a progress bar: value out of total."""
    try:
        share = float(value or 0) / float(total)
    except (TypeError, ValueError, ZeroDivisionError):
        return 0
    return max(0, min(100, int(round(share * 20)) * 5))


@register.filter
def evaluation_status_label(code: object) -> str:
    return _label(labels.EVALUATION_STATUS, code)


@register.filter
def measure(value: Any) -> str:
    """An evaluation measure: a rate as ``50.0 % (1/2)``, seconds and means to two places."""
    if value is None:
        return "—"
    if isinstance(value, dict):
        if value.get("rate") is None:
            return "—"
        return f"{value['rate'] * 100:.1f} % ({value['ok']}/{value['total']})"
    if isinstance(value, float):
        return f"{value:.2f}"
    return str(value)


@register.filter
def get_item(mapping: Any, key: Any) -> Any:
    return (mapping or {}).get(key)
