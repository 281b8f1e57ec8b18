"""The display-precedence rule (publication/precedence.py) branch by branch, on hand-built
states: each decision is compared whole (action, the state left behind and the rule named),
so a rule that showed, kept or withheld the wrong fact, or forgot the durable fact or the
rejection's reach underneath, fails here."""

import json

import pytest

from publication.precedence import (
    Action,
    BlockDisplay,
    Decision,
    DisplayEvent,
    DisplayState,
    Kind,
    _conflicts,
    _names_shown_preview,
    content_digest,
    decide_display,
    facts_of,
    fall_back,
    fold_events,
)

PUB = "pub_1"
BEATS_PREVIEW = "a committed receipt beats a preview of the same revision"
REJECTION = "a current source rejection beats both"
NEWER_PREVIEW = "a newer legitimate preview beats an older commit (temporary)"
OLDER_PREVIEW = "an older preview changes nothing"
RECEIPT_SHOWN = "a committed receipt is shown"
CONFLICT = "same publication ID and revision with a different body"


def _preview(rev: int, body: str = "p", pub: str = PUB, cand: str = "") -> DisplayEvent:
    return DisplayEvent(Kind.PREVIEW, pub, rev, body, "verified", cand)


def _committed(rev: int, body: str = "c", pub: str = PUB) -> DisplayEvent:
    return DisplayEvent(Kind.COMMITTED, pub, rev, body, "verified")


def _rejected(rev: int, pub: str = PUB) -> DisplayEvent:
    return DisplayEvent(Kind.REJECTED, pub, rev)


# --- two blocks ---------------------------------------------------------------------


@pytest.mark.parametrize(
    "current",
    [
        DisplayState(shown=_preview(1, pub="pub_other")),
        DisplayState(shown=None, committed=_committed(1, pub="pub_other"), rejected_through=1),
    ],
)
def test_facts_about_two_blocks_are_a_callers_bug(current):
    with pytest.raises(ValueError, match="^facts about two different blocks$"):
        decide_display(current, _preview(2))


def test_an_unnamed_fact_belongs_to_whatever_block_is_shown():
    unnamed = DisplayState(shown=_preview(1, pub="", cand="cand_a"))
    assert decide_display(unnamed, _preview(2)).action == Action.SHOW
    named = DisplayState(shown=_preview(1))
    assert decide_display(named, _preview(2, pub="")).action == Action.SHOW


# --- a source rejection ---------------------------------------------------------------


def test_a_rejection_of_nothing_withholds_and_remembers_its_revision():
    assert decide_display(None, _rejected(2)) == Decision(
        Action.WITHHOLD, DisplayState(shown=None, rejected_through=2), REJECTION
    )


def test_a_rejection_withholds_the_revision_it_names_and_keeps_the_durable_fact():
    current = DisplayState(shown=_committed(2), committed=_committed(2))
    assert decide_display(current, _rejected(2)) == Decision(
        Action.WITHHOLD,
        DisplayState(shown=None, committed=_committed(2), rejected_through=2),
        REJECTION,
    )


def test_a_rejection_of_an_older_revision_keeps_a_newer_display():
    current = DisplayState(shown=_preview(3), committed=_committed(1))
    assert decide_display(current, _rejected(2)) == Decision(
        Action.KEEP,
        DisplayState(shown=_preview(3), committed=_committed(1), rejected_through=2),
        "the rejection covers an older revision only",
    )


def test_an_older_rejection_never_narrows_what_is_covered():
    current = DisplayState(shown=_preview(5), committed=_committed(1), rejected_through=4)
    assert decide_display(current, _rejected(2)).state.rejected_through == 4
    withheld = DisplayState(shown=_preview(3), rejected_through=3)
    assert decide_display(withheld, _rejected(1)) == Decision(
        Action.WITHHOLD, DisplayState(shown=None, rejected_through=3), REJECTION
    )


# --- a fact the rejection covers ------------------------------------------------------


def test_a_covered_receipt_becomes_the_durable_fact_but_stays_withheld():
    current = DisplayState(shown=None, rejected_through=2)
    assert decide_display(current, _committed(2)) == Decision(
        Action.WITHHOLD,
        DisplayState(shown=None, committed=_committed(2), rejected_through=2),
        REJECTION,
    )


def test_a_covered_receipt_replaces_an_older_durable_fact_only():
    older = DisplayState(shown=None, committed=_committed(1, "old"), rejected_through=3)
    assert decide_display(older, _committed(2)).state == DisplayState(
        shown=None, committed=_committed(2), rejected_through=3
    )
    same = DisplayState(shown=None, committed=_committed(2, "first"), rejected_through=3)
    assert decide_display(same, _committed(2, "second")) == Decision(
        Action.WITHHOLD, same, REJECTION
    )
    newer = DisplayState(shown=None, committed=_committed(3), rejected_through=3)
    assert decide_display(newer, _committed(2)) == Decision(Action.WITHHOLD, newer, REJECTION)


def test_a_covered_preview_changes_nothing():
    current = DisplayState(shown=None, committed=_committed(1), rejected_through=2)
    assert decide_display(current, _preview(2)) == Decision(Action.WITHHOLD, current, REJECTION)


def test_a_covered_fact_keeps_a_newer_display():
    current = DisplayState(shown=_preview(4), committed=_committed(1), rejected_through=2)
    assert decide_display(current, _committed(2)) == Decision(
        Action.KEEP,
        DisplayState(shown=_preview(4), committed=_committed(2), rejected_through=2),
        REJECTION,
    )
    assert decide_display(current, _preview(1)) == Decision(Action.KEEP, current, REJECTION)


def test_the_revision_after_the_rejection_is_not_covered():
    current = DisplayState(shown=None, committed=_committed(1), rejected_through=1)
    assert decide_display(current, _committed(2)).action == Action.SHOW


# --- protocol conflicts -----------------------------------------------------------------


@pytest.mark.parametrize(
    "current",
    [
        DisplayState(shown=_committed(2, "a"), committed=_committed(2, "a")),
        DisplayState(shown=_preview(2, "a"), committed=_committed(1)),
        DisplayState(shown=_preview(3), committed=_committed(2, "a")),
    ],
)
def test_the_same_identity_and_revision_with_another_body_is_a_conflict(current):
    assert decide_display(current, _committed(2, "b")) == Decision(
        Action.CONFLICT, current, CONFLICT
    )


def test_a_conflict_needs_the_same_named_identity_revision_and_two_bodies():
    assert _conflicts(_committed(2, "a"), _committed(2, "b"))
    assert not _conflicts(None, _committed(2, "b"))
    assert not _conflicts(DisplayEvent(Kind.REJECTED, PUB, 2, "a"), _committed(2, "b"))
    assert not _conflicts(_preview(2, "a", pub=""), _preview(2, "b", pub=""))
    assert not _conflicts(_committed(2, "a"), _committed(2, "b", pub="pub_2"))
    assert not _conflicts(_committed(2, "a"), _committed(3, "b"))
    assert not _conflicts(_committed(2, ""), _committed(2, "b"))
    assert not _conflicts(_committed(2, "a"), _committed(2, ""))
    assert not _conflicts(_committed(2, "a"), _committed(2, "a"))


# --- a committed receipt ------------------------------------------------------------------


def test_an_older_receipt_changes_nothing():
    current = DisplayState(shown=_committed(3), committed=_committed(3), rejected_through=1)
    assert decide_display(current, _committed(2)) == Decision(
        Action.KEEP, current, "an older receipt changes nothing"
    )


def test_the_same_receipt_again_is_shown_again():
    current = DisplayState(shown=_committed(3), committed=_committed(3))
    assert decide_display(current, _committed(3)) == Decision(Action.SHOW, current, RECEIPT_SHOWN)


def test_a_receipt_under_a_newer_preview_becomes_the_durable_fact():
    current = DisplayState(shown=_preview(3), committed=_committed(1), rejected_through=1)
    assert decide_display(current, _committed(2)) == Decision(
        Action.KEEP,
        DisplayState(shown=_preview(3), committed=_committed(2), rejected_through=1),
        "a newer preview beats an older commit (temporary)",
    )


def test_a_receipt_replaces_the_preview_of_its_revision():
    current = DisplayState(shown=_preview(2, "c"), committed=_committed(1), rejected_through=1)
    assert decide_display(current, _committed(2)) == Decision(
        Action.SHOW,
        DisplayState(shown=_committed(2), committed=_committed(2), rejected_through=1),
        BEATS_PREVIEW,
    )


def test_a_receipt_replaces_an_older_preview_and_an_older_receipt():
    preview = DisplayState(shown=_preview(1, "c"))
    assert decide_display(preview, _committed(2)).rule == BEATS_PREVIEW
    receipt = DisplayState(shown=_committed(1), committed=_committed(1), rejected_through=0)
    assert decide_display(receipt, _committed(2)) == Decision(
        Action.SHOW, DisplayState(shown=_committed(2), committed=_committed(2)), RECEIPT_SHOWN
    )
    assert decide_display(None, _committed(1)) == Decision(
        Action.SHOW, DisplayState(shown=_committed(1), committed=_committed(1)), RECEIPT_SHOWN
    )


def test_a_shown_receipt_newer_than_the_incoming_one_is_not_a_preview():
    # shown newer than incoming, but a receipt: only a newer *preview* stays.
    current = DisplayState(shown=_committed(3), committed=None, rejected_through=0)
    assert decide_display(current, _committed(2)) == Decision(
        Action.SHOW, DisplayState(shown=_committed(2), committed=_committed(2)), RECEIPT_SHOWN
    )


# --- a preview ------------------------------------------------------------------------------


def test_a_preview_of_the_shown_receipts_revision_cannot_dress_it_up():
    current = DisplayState(shown=_committed(2, "p"), committed=_committed(2, "p"))
    assert decide_display(current, _preview(2)) == Decision(Action.KEEP, current, BEATS_PREVIEW)


@pytest.mark.parametrize(
    "current",
    [
        DisplayState(shown=_committed(3), committed=_committed(3)),
        DisplayState(shown=_preview(3)),
        DisplayState(shown=_preview(2)),
    ],
)
def test_an_older_or_same_preview_changes_nothing(current):
    assert decide_display(current, _preview(2)) == Decision(Action.KEEP, current, OLDER_PREVIEW)


@pytest.mark.parametrize("durable", [2, 3])
def test_a_preview_under_a_durable_fact_of_its_revision_or_newer_changes_nothing(durable):
    current = DisplayState(shown=None, committed=_committed(durable, "p"))
    assert decide_display(current, _preview(2)) == Decision(Action.KEEP, current, BEATS_PREVIEW)


def test_a_newer_preview_shows_over_the_durable_fact_temporarily():
    current = DisplayState(shown=_committed(1), committed=_committed(1), rejected_through=0)
    decision = decide_display(current, _preview(2))
    assert decision == Decision(
        Action.SHOW, DisplayState(shown=_preview(2), committed=_committed(1)), NEWER_PREVIEW
    )
    assert decision.state.temporary
    withheld = DisplayState(shown=None, committed=_committed(1), rejected_through=1)
    assert decide_display(withheld, _preview(2)) == Decision(
        Action.SHOW,
        DisplayState(shown=_preview(2), committed=_committed(1), rejected_through=1),
        NEWER_PREVIEW,
    )
    assert decide_display(None, _preview(1)) == Decision(
        Action.SHOW, DisplayState(shown=_preview(1)), NEWER_PREVIEW
    )


def test_only_a_shown_preview_is_temporary():
    assert not DisplayState(shown=None).temporary
    assert not DisplayState(shown=_committed(1)).temporary
    assert DisplayState(shown=_preview(1)).temporary


# --- falling back -----------------------------------------------------------------------------


def test_falling_back_leaves_a_durable_display_alone():
    for state in (
        DisplayState(shown=None, committed=_committed(1), rejected_through=0),
        DisplayState(shown=_committed(2), committed=_committed(2)),
    ):
        assert fall_back(state) is state


def test_a_preview_never_saved_falls_back_to_the_durable_fact():
    state = DisplayState(shown=_preview(3), committed=_committed(2), rejected_through=1)
    assert fall_back(state) == DisplayState(
        shown=_committed(2), committed=_committed(2), rejected_through=1
    )


@pytest.mark.parametrize("through", [2, 3])
def test_a_durable_fact_the_rejection_covers_stays_withheld_on_fall_back(through):
    state = DisplayState(shown=_preview(4), committed=_committed(2), rejected_through=through)
    assert fall_back(state) == DisplayState(
        shown=None, committed=_committed(2), rejected_through=through
    )


def test_a_preview_with_nothing_underneath_falls_back_to_nothing():
    state = DisplayState(shown=_preview(1), rejected_through=0)
    assert fall_back(state) == DisplayState(shown=None)


# --- the public events ---------------------------------------------------------------------


def test_a_bodys_identity_ignores_key_order_and_keeps_its_text():
    assert content_digest(None) == ""
    assert content_digest({}) == "{}"
    assert content_digest({"text": "中", "type": "text"}) == '{"text":"中","type":"text"}'
    assert content_digest({"type": "text", "text": "中"}) == '{"text":"中","type":"text"}'
    assert content_digest([1, 2]) == "[1,2]"


def test_a_visible_preview_is_one_fact_with_its_body_hint_and_candidate():
    content = {"type": "text", "text": "草稿"}
    data = {
        "publicationId": PUB,
        "candidateId": "cand_1",
        "revision": 2,
        "state": "visible",
        "content": content,
        "sourceHint": "sources_partial",
    }
    assert facts_of("answer.preview", data) == [
        DisplayEvent(Kind.PREVIEW, PUB, 2, content_digest(content), "sources_partial", "cand_1")
    ]
    assert facts_of("answer.published", data) == [
        DisplayEvent(Kind.COMMITTED, PUB, 2, content_digest(content), "sources_partial", "cand_1")
    ]


def test_a_fact_missing_its_names_and_hint_has_empty_names_and_an_unknown_hint():
    assert facts_of("answer.preview", {"revision": 1}) == [
        DisplayEvent(Kind.PREVIEW, "", 1, "", "unknown", "")
    ]
    nulls = {"revision": 1, "publicationId": None, "candidateId": None, "sourceHint": None}
    assert facts_of("answer.published", nulls) == [
        DisplayEvent(Kind.COMMITTED, "", 1, "", "unknown", "")
    ]


def test_a_protected_preview_is_a_rejection_of_its_revision():
    data = {"publicationId": PUB, "candidateId": "cand_1", "revision": 2, "state": "protected"}
    assert facts_of("answer.preview", data) == [DisplayEvent(Kind.REJECTED, PUB, 2)]


def test_a_protected_receipt_is_the_durable_fact_and_a_rejection():
    data = {"publicationId": PUB, "candidateId": "cand_1", "revision": 2, "state": "protected"}
    assert facts_of("answer.published", data) == [
        DisplayEvent(Kind.COMMITTED, PUB, 2, candidate_id="cand_1"),
        DisplayEvent(Kind.REJECTED, PUB, 2),
    ]


@pytest.mark.parametrize(
    ("event_type", "data"),
    [
        ("answer.rejected", {"revision": 1}),
        ("answer.preview", {}),
        ("answer.preview", {"revision": "1"}),
        ("answer.published", {"revision": None}),
    ],
)
def test_other_events_and_facts_without_a_revision_state_nothing(event_type, data):
    assert facts_of(event_type, data) == []


def _event(kind: str, rev: int, body: str | None, cand: str = "") -> dict:
    data: dict = {"publicationId": PUB, "revision": rev, "sourceHint": "verified"}
    if cand:
        data["candidateId"] = cand
    if body is None:
        data["state"] = "protected"
    else:
        data.update(state="visible", content={"type": "text", "text": body})
    return {"type": f"answer.{kind}", "data": data}


@pytest.mark.parametrize("ending", ["run.completed", "run.partial", "run.failed", "run.cancelled"])
def test_every_run_end_drops_the_unsaved_preview(ending):
    events = [_event("published", 1, "a"), _event("preview", 2, "b"), {"type": ending}]
    assert fold_events(events).as_dict() == {
        "display": "shown",
        "revision": 1,
        "content": {"type": "text", "text": "a"},
        "sourceHint": "verified",
        "temporary": False,
        "conflict": False,
    }


@pytest.mark.parametrize("never_saved", ["answer.rejected", "answer.save_unknown"])
def test_a_never_saved_event_drops_only_the_preview_it_names(never_saved):
    base = [_event("published", 1, "a"), _event("preview", 2, "b", cand="cand_2")]
    named = fold_events([*base, {"type": never_saved, "data": {"candidateId": "cand_2"}}])
    assert named.state.shown == named.state.committed
    other = fold_events([*base, {"type": never_saved, "data": {"candidateId": "cand_x"}}])
    assert other.state.temporary


def test_a_never_saved_event_without_a_candidate_drops_nothing():
    unnamed = [_event("published", 1, "a"), _event("preview", 2, "b")]
    display = fold_events([*unnamed, {"type": "answer.rejected", "data": {"candidateId": ""}}])
    assert display.state.temporary
    display = fold_events([*unnamed, {"type": "answer.rejected"}])
    assert display.state.temporary


def test_a_never_saved_event_naming_the_shown_receipt_changes_nothing():
    events = [_event("published", 1, "a", cand="cand_1")]
    display = fold_events([*events, {"type": "answer.rejected", "data": {"candidateId": "cand_1"}}])
    assert display.state.shown is not None
    assert display.state.shown.kind == Kind.COMMITTED


def test_a_conflict_is_reported_and_the_first_body_stays():
    display = fold_events([_event("published", 1, "a"), _event("published", 1, "b")])
    assert display.conflict
    assert display.as_dict()["content"] == {"type": "text", "text": "a"}
    assert not fold_events([_event("published", 1, "a"), _event("published", 1, "a")]).conflict


def test_an_event_without_a_type_or_data_changes_nothing():
    display = fold_events([_event("preview", 1, "a"), {}, {"type": "answer.preview"}])
    assert display.as_dict()["temporary"] is True
    assert display.as_dict()["revision"] == 1


def test_the_display_says_withheld_only_under_a_rejection():
    assert BlockDisplay(DisplayState(shown=None)).as_dict() == {
        "display": "none",
        "conflict": False,
    }
    assert BlockDisplay(DisplayState(shown=None, rejected_through=1), True).as_dict() == {
        "display": "withheld",
        "conflict": True,
    }


def test_a_shown_fact_without_a_body_has_no_content():
    shown = DisplayEvent(Kind.PREVIEW, PUB, 1, "", "none")
    assert BlockDisplay(DisplayState(shown=shown), conflict=True).as_dict() == {
        "display": "shown",
        "revision": 1,
        "content": None,
        "sourceHint": "none",
        "temporary": True,
        "conflict": True,
    }
    body = json.dumps({"text": "x"})
    shown = DisplayEvent(Kind.COMMITTED, PUB, 2, body, "verified")
    assert BlockDisplay(DisplayState(shown=shown)).as_dict()["content"] == {"text": "x"}


def test_no_events_display_nothing():
    display = fold_events([])
    assert display == BlockDisplay(DisplayState(shown=None))
    assert display.as_dict() == {"display": "none", "conflict": False}


def test_a_never_saved_event_with_nothing_shown_changes_nothing():
    display = fold_events([{"type": "answer.save_unknown", "data": {"candidateId": "cand_1"}}])
    assert display.as_dict() == {"display": "none", "conflict": False}


def test_only_a_shown_preview_can_be_named_as_never_saved():
    named = {"candidateId": "cand_1"}
    receipt = DisplayEvent(Kind.COMMITTED, PUB, 1, "c", "verified", "cand_1")
    assert not _names_shown_preview(DisplayState(shown=receipt, committed=receipt), named)
    assert not _names_shown_preview(DisplayState(shown=None, committed=receipt), named)
    assert _names_shown_preview(DisplayState(shown=_preview(2, cand="cand_1")), named)


@pytest.mark.parametrize(
    "between",
    [{"type": "run.completed"}, {"type": "answer.rejected", "data": {"candidateId": "cand_x"}}],
)
def test_events_after_a_run_end_or_a_never_saved_event_are_still_folded(between):
    display = fold_events(
        [_event("preview", 1, "a", cand="cand_1"), between, _event("published", 2, "b")]
    )
    assert display.as_dict()["revision"] == 2
    assert display.as_dict()["temporary"] is False
