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
raises, except for facts about two different blocks (a caller's bug).
"""

from dataclasses import dataclass
from enum import StrEnum


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
        and a.revision == b.revision
        and bool(a.body_digest)
        and bool(b.body_digest)
        and a.body_digest != b.body_digest
    )


def decide_display(current: DisplayState | None, incoming: DisplayEvent) -> Decision:
    current = current or DisplayState(shown=None)
    for known in (current.shown, current.committed):
        if known is not None and known.publication_id != incoming.publication_id:
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
        return Decision(Action.WITHHOLD, current, "a current source rejection beats both")

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
