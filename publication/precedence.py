"""Display precedence of one answer block: a pure function, no database.

What should a client show for a block when a new fact about it arrives? The
rules (DESIGN.md "Publication", seed 004 §六):

1. A newer legitimate preview beats an older committed revision — for the
   temporary display only: the committed revision stays the durable fact
   underneath and comes back if the preview is never saved.
2. A committed receipt beats a preview of the same revision: the receipt carries
   the database-confirmed source status; a preview never dresses it up.
3. A current source rejection beats both: what it covers is withheld, however
   legitimately it was once previewed or committed. A *newer* revision is a new
   fact with its own source proof, and may show again.
4. The same publication ID and revision with a different body is a protocol
   conflict — never "last one wins".

Older facts than what is shown (a stale preview, an older receipt arriving
late) change nothing. The function is total over these inputs and never
raises, except for facts about two different blocks (a caller's bug). A preview
of a block not yet issued a publication ID (only a candidate ID) has no
publication ID to conflict with.

These rules exist twice: here, and in the browser SDK's ChatSession
(static/sparktide/session.js), which folds the same public events. This module
generates the cases both run, tests/conformance/display_precedence.json
(``python -m publication.precedence --cases``): each case is the public event
data a client receives about one block (``answer.preview``,
``answer.published``, ``answer.rejected``, ``answer.save_unknown``, a terminal
``run.*``) and the display they lead to, folded by ``fold_events``. In that
data a current source rejection is the reader's ``state: "protected"``; an
``answer.rejected`` or ``answer.save_unknown`` says the candidate it names was
never saved (its preview goes, the durable fact shows again), and so does the
run's end for every preview.
"""

import json
import sys
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from enum import StrEnum
from pathlib import Path
from typing import Any


class Kind(StrEnum):
    PREVIEW = "preview"
    COMMITTED = "committed"
    REJECTED = "rejected"  # a current source rejection (the reader's "protected")


class Action(StrEnum):
    SHOW = "show"  # display the incoming body (temporarily for a preview)
    KEEP = "keep"  # keep the current display; the incoming fact is older or weaker
    WITHHOLD = "withhold"  # show no body for the block
    CONFLICT = "conflict"  # protocol conflict: same identity and revision, another body


@dataclass(frozen=True)
class DisplayEvent:
    """One fact about a block: a preview, a committed receipt or a source rejection."""

    kind: Kind
    publication_id: str
    revision: int
    body_digest: str = ""
    source_hint: str = ""
    candidate_id: str = ""


@dataclass(frozen=True)
class DisplayState:
    """What is displayed for a block, and the durable fact underneath it."""

    shown: DisplayEvent | None  # None: withheld
    committed: DisplayEvent | None = None  # newest committed receipt
    rejected_through: int = 0  # a source rejection covers revisions up to this one

    @property
    def temporary(self) -> bool:
        return self.shown is not None and self.shown.kind == Kind.PREVIEW


@dataclass(frozen=True)
class Decision:
    action: Action
    state: DisplayState
    rule: str


def _conflicts(a: DisplayEvent | None, b: DisplayEvent) -> bool:
    return (
        a is not None
        and a.kind != Kind.REJECTED
        and bool(a.publication_id)
        and a.publication_id == b.publication_id
        and a.revision == b.revision
        and bool(a.body_digest)
        and bool(b.body_digest)
        and a.body_digest != b.body_digest
    )


def decide_display(current: DisplayState | None, incoming: DisplayEvent) -> Decision:
    current = current or DisplayState(shown=None)
    for known in (current.shown, current.committed):
        if (
            known is not None
            and known.publication_id
            and incoming.publication_id
            and known.publication_id != incoming.publication_id
        ):
            raise ValueError("facts about two different blocks")

    if incoming.kind == Kind.REJECTED:
        covered = max(current.rejected_through, incoming.revision)
        shown = current.shown
        if shown is not None and shown.revision <= covered:
            shown = None
        committed = current.committed
        state = DisplayState(shown=shown, committed=committed, rejected_through=covered)
        if shown is None:
            return Decision(Action.WITHHOLD, state, "a current source rejection beats both")
        # A newer revision than the rejection covers is a new fact: it stays.
        return Decision(Action.KEEP, state, "the rejection covers an older revision only")

    if incoming.revision <= current.rejected_through:
        state = current
        newer = current.committed is None or current.committed.revision < incoming.revision
        if incoming.kind == Kind.COMMITTED and newer:
            # Withheld, but still the durable fact underneath.
            state = DisplayState(
                shown=current.shown, committed=incoming, rejected_through=current.rejected_through
            )
        action = Action.WITHHOLD if state.shown is None else Action.KEEP
        return Decision(action, state, "a current source rejection beats both")

    for known in (current.shown, current.committed):
        if _conflicts(known, incoming):
            return Decision(
                Action.CONFLICT,
                current,
                "same publication ID and revision with a different body",
            )

    if incoming.kind == Kind.COMMITTED:
        committed = current.committed
        if committed is not None and committed.revision > incoming.revision:
            return Decision(Action.KEEP, current, "an older receipt changes nothing")
        shown = current.shown
        if shown is not None and shown.kind == Kind.PREVIEW and shown.revision > incoming.revision:
            # A newer preview stays on display; this receipt becomes the durable fact.
            state = DisplayState(
                shown=shown, committed=incoming, rejected_through=current.rejected_through
            )
            return Decision(Action.KEEP, state, "a newer preview beats an older commit (temporary)")
        state = DisplayState(
            shown=incoming, committed=incoming, rejected_through=current.rejected_through
        )
        rule = (
            "a committed receipt beats a preview of the same revision"
            if shown is not None and shown.kind == Kind.PREVIEW
            else "a committed receipt is shown"
        )
        return Decision(Action.SHOW, state, rule)

    # A preview.
    shown = current.shown
    if shown is not None and shown.revision >= incoming.revision:
        rule = (
            "a committed receipt beats a preview of the same revision"
            if shown.kind == Kind.COMMITTED and shown.revision == incoming.revision
            else "an older preview changes nothing"
        )
        return Decision(Action.KEEP, current, rule)
    committed = current.committed
    if committed is not None and committed.revision >= incoming.revision:
        return Decision(
            Action.KEEP, current, "a committed receipt beats a preview of the same revision"
        )
    state = DisplayState(
        shown=incoming, committed=committed, rejected_through=current.rejected_through
    )
    return Decision(
        Action.SHOW, state, "a newer legitimate preview beats an older commit (temporary)"
    )


def fall_back(state: DisplayState) -> DisplayState:
    """The preview on display was never saved: show the durable fact again."""
    if not state.temporary:
        return state
    committed = state.committed
    if committed is not None and committed.revision <= state.rejected_through:
        committed_shown = None
    else:
        committed_shown = committed
    return DisplayState(
        shown=committed_shown, committed=committed, rejected_through=state.rejected_through
    )


# --- the public events a client receives, folded ------------------------------------

TERMINAL_EVENTS = frozenset({"run.completed", "run.partial", "run.failed", "run.cancelled"})
NEVER_SAVED_EVENTS = frozenset({"answer.rejected", "answer.save_unknown"})


def content_digest(content: Any) -> str:
    """A body's identity, independent of key order (the SDK's ``sameContent``)."""
    if content is None:
        return ""
    return json.dumps(content, sort_keys=True, ensure_ascii=False, separators=(",", ":"))


def facts_of(event_type: str, data: Mapping[str, Any]) -> list[DisplayEvent]:
    """The display facts one public ``answer.preview`` / ``answer.published`` states.

    A protected event (the reader's current source rejection) is a rejection of
    its revision; a protected receipt is still the durable fact of that revision.
    """
    kind = {"answer.preview": Kind.PREVIEW, "answer.published": Kind.COMMITTED}.get(event_type)
    revision = data.get("revision")
    if kind is None or not isinstance(revision, int):
        return []
    publication_id = str(data.get("publicationId") or "")
    candidate_id = str(data.get("candidateId") or "")
    if data.get("state") == "protected":
        facts = []
        if kind == Kind.COMMITTED:
            facts.append(DisplayEvent(kind, publication_id, revision, candidate_id=candidate_id))
        facts.append(DisplayEvent(Kind.REJECTED, publication_id, revision))
        return facts
    return [
        DisplayEvent(
            kind,
            publication_id,
            revision,
            content_digest(data.get("content")),
            str(data.get("sourceHint") or "unknown"),
            candidate_id,
        )
    ]


@dataclass(frozen=True)
class BlockDisplay:
    """What a client shows for one block after a sequence of public events."""

    state: DisplayState
    conflict: bool = False

    def as_dict(self) -> dict[str, Any]:
        shown = self.state.shown
        if shown is None:
            display = "withheld" if self.state.rejected_through else "none"
            return {"display": display, "conflict": self.conflict}
        return {
            "display": "shown",
            "revision": shown.revision,
            "content": json.loads(shown.body_digest) if shown.body_digest else None,
            "sourceHint": shown.source_hint,
            "temporary": self.state.temporary,
            "conflict": self.conflict,
        }


def _names_shown_preview(state: DisplayState, data: Mapping[str, Any]) -> bool:
    shown = state.shown
    if shown is None or shown.kind != Kind.PREVIEW:
        return False
    candidate_id = data.get("candidateId")
    return bool(candidate_id) and candidate_id == shown.candidate_id


def fold_events(events: Iterable[Mapping[str, Any]]) -> BlockDisplay:
    """Fold the public events (``{type, data}``) about one block into its display."""
    state = DisplayState(shown=None)
    conflict = False
    for event in events:
        event_type, data = str(event.get("type")), event.get("data") or {}
        if event_type in TERMINAL_EVENTS:
            state = fall_back(state)  # previews that were never saved go
            continue
        if event_type in NEVER_SAVED_EVENTS:
            if _names_shown_preview(state, data):
                state = fall_back(state)
            continue
        for fact in facts_of(event_type, data):
            decision = decide_display(state, fact)
            if decision.action == Action.CONFLICT:
                conflict = True
            state = decision.state
    return BlockDisplay(state, conflict)


# --- the shared conformance cases ------------------------------------------------------

CASES_PATH = Path(__file__).resolve().parent.parent / "tests/conformance/display_precedence.json"
_PUB = "pub_aaaaaaaaaaaaaaaaaaaaaaa1"


# The scenarios below are built once, at import, before mutmut switches a mutant on: a
# mutant there could never be seen by a test, so they are left out of `make mutation`.
# pragma: no mutate start
def _text(text: str) -> dict[str, str]:
    return {"type": "text", "text": text}


def _preview(
    revision: int,
    body: str | None = None,
    hint: str = "verified",
    *,
    cand: str = "",
    pub: str = _PUB,
) -> dict[str, Any]:
    data: dict[str, Any] = {"candidateId": cand or f"cand_r{revision}", "revision": revision}
    if pub:
        data["publicationId"] = pub
        data["deliveryOrdinal"] = 1
    if body is None:
        data.update(state="protected", sourceHint="unknown")
    else:
        data.update(state="visible", content=_text(body), sourceHint=hint)
    return {"type": "answer.preview", "data": data}


def _published(
    revision: int, body: str | None = None, hint: str = "verified", *, cand: str = ""
) -> dict[str, Any]:
    data: dict[str, Any] = {
        "publicationId": _PUB,
        "candidateId": cand or f"cand_r{revision}",
        "revision": revision,
        "deliveryOrdinal": 1,
        "truncated": False,
        "outcome": "COMMITTED",
    }
    if body is None:
        data.update(state="protected", sourceHint="unknown")
    else:
        data.update(state="visible", content=_text(body), sourceHint=hint)
    return {"type": "answer.published", "data": data}


def _rejected(revision: int, code: str = "BLOCK_REVISION_QUOTA_EXCEEDED") -> dict[str, Any]:
    data = {"candidateId": f"cand_r{revision}", "publicationId": _PUB, "code": code}
    return {"type": "answer.rejected", "data": {**data, "effect": "revise"}}


def _save_unknown(revision: int) -> dict[str, Any]:
    data = {"candidateId": f"cand_r{revision}", "publicationId": _PUB, "effect": "revise"}
    return {"type": "answer.save_unknown", "data": {**data, "code": "SAVE_OUTCOME_UNKNOWN"}}


_ENDED = {"type": "run.completed", "data": {"status": "COMPLETED"}}

# name → the public events a client receives about one block, in seq order.
SCENARIOS: list[tuple[str, list[dict[str, Any]]]] = [
    ("a first preview shows temporarily", [_preview(1, "草稿")]),
    ("a first receipt shows durably", [_published(1, "定稿")]),
    (
        "a receipt beats the preview of its revision and carries its own source status",
        [_preview(1, "同文", "verified"), _published(1, "同文", "sources_partial")],
    ),
    (
        "a same-revision preview arriving after the receipt cannot dress it up",
        [_published(1, "同文", "sources_partial"), _preview(1, "同文", "verified")],
    ),
    (
        "a newer legitimate preview beats an older commit, temporarily",
        [_published(1, "已保存"), _preview(2, "修改中")],
    ),
    (
        "a newer preview that is rejected falls back to the committed revision",
        [_published(1, "已保存"), _preview(2, "修改中"), _rejected(2)],
    ),
    (
        "a newer preview whose save is unknown falls back to the committed revision",
        [_published(1, "已保存"), _preview(2, "修改中"), _save_unknown(2)],
    ),
    (
        "a newer preview never saved before the run ended falls back to the committed revision",
        [_published(1, "已保存"), _preview(2, "修改中"), _ENDED],
    ),
    (
        "the newer preview's own receipt replaces it durably",
        [_published(1, "已保存"), _preview(2, "修改后"), _published(2, "修改后")],
    ),
    (
        "a rejection of another candidate leaves the preview on display",
        [_published(1, "已保存"), _preview(2, "修改中", cand="cand_live"), _rejected(3)],
    ),
    (
        "an older preview arriving after a newer receipt changes nothing",
        [_published(2, "新"), _preview(1, "旧")],
    ),
    (
        "an older receipt arriving late changes nothing",
        [_published(3, "三"), _published(2, "二")],
    ),
    (
        "an older receipt under a newer preview is the durable fact it falls back to",
        [_preview(3, "三"), _published(2, "二"), _rejected(3)],
    ),
    ("a protected receipt is withheld", [_published(1)]),
    (
        "a receipt protected on replay is withheld although it was shown before",
        [_published(1, "原文"), _published(1)],
    ),
    (
        "a protected preview of a newer revision withholds the older committed revision too",
        [_published(1, "已保存"), _preview(2)],
    ),
    (
        "a protected preview that is never saved still withholds the older committed revision",
        [_published(1, "已保存"), _preview(2), _ENDED],
    ),
    (
        "a visible receipt of a revision a current rejection covers stays withheld",
        [_published(1, "已保存"), _preview(2), _published(2, "修改后")],
    ),
    (
        "a newer revision after a rejection is a new fact and shows again",
        [_published(1, "已保存"), _published(1), _published(2, "新证据")],
    ),
    (
        "a newer preview after a rejection shows again, temporarily",
        [_published(1), _preview(2, "新草稿")],
    ),
    (
        "a preview over a withheld revision that is never saved leaves the block withheld",
        [_published(1), _preview(2, "新草稿"), _rejected(2)],
    ),
    (
        "a protected receipt of an older revision keeps a newer display",
        [_published(3, "三"), _published(2)],
    ),
    (
        "two receipts of one revision with different bodies are a conflict and the first stays",
        [_published(1, "原文"), _published(1, "另一版本")],
    ),
    (
        "a preview and the receipt of its revision with different bodies are a conflict",
        [_published(1, "已保存"), _preview(2, "草稿"), _published(2, "另一版本")],
    ),
    (
        "a same-revision preview with another body after the receipt is a conflict",
        [_published(2, "定稿"), _preview(2, "另一版本")],
    ),
    (
        "two previews of one revision with different bodies are a conflict",
        [_published(1, "已保存"), _preview(2, "草稿"), _preview(2, "另一版本")],
    ),
    (
        "the same receipt twice is no conflict",
        [_published(1, "原文"), _published(1, "原文")],
    ),
    (
        "a preview known only by its candidate ID is replaced by its receipt, whatever its body",
        [
            _preview(1, "草稿", "none", cand="cand_new", pub=""),
            _published(1, "定稿", cand="cand_new"),
        ],
    ),
    (
        "a protected preview of a new block is withheld",
        [_preview(1, cand="cand_new", pub="")],
    ),
    (
        "a preview of a new block that is never saved leaves nothing",
        [_preview(1, "草稿", cand="cand_new", pub=""), _ENDED],
    ),
]
# pragma: no mutate end


def conformance_cases() -> dict[str, Any]:
    """The shared cases: each scenario's events and the display these rules give."""
    return {
        "about": (
            "Display precedence of one answer block over the public events a client receives."
            " Generated by publication/precedence.py (python -m publication.precedence --cases);"
            " run by tests/conformance/test_display_precedence.py and"
            " tests/js/display_precedence.test.mjs (static/sparktide/session.js ChatSession)."
            " display: shown (revision, content, sourceHint, temporary = a preview, not saved),"
            " withheld (a current source rejection covers it) or none (nothing to show)."
        ),
        "publicationId": _PUB,
        "cases": [
            {"name": name, "events": events, "expect": fold_events(events).as_dict()}
            for name, events in SCENARIOS
        ],
    }


def render_cases() -> str:
    return json.dumps(conformance_cases(), ensure_ascii=False, indent=2) + "\n"


if __name__ == "__main__":
    if sys.argv[1:] != ["--cases"]:
        sys.exit("usage: python -m publication.precedence --cases")
    CASES_PATH.write_text(render_cases(), encoding="utf-8")
    print(f"wrote {CASES_PATH}")
