"""Display precedence of one block, table-driven (DESIGN.md "Publication")."""

import pytest

from publication.precedence import (
    Action,
    DisplayEvent,
    DisplayState,
    Kind,
    decide_display,
    fall_back,
)

PUB = "pub_aaaaaaaaaaaaaaaaaaaaaaaa"


def preview(revision, body="x", hint="verified"):
    return DisplayEvent(Kind.PREVIEW, PUB, revision, f"digest-{body}", hint)


def committed(revision, body="x", hint="verified"):
    return DisplayEvent(Kind.COMMITTED, PUB, revision, f"digest-{body}", hint)


def rejected(revision):
    return DisplayEvent(Kind.REJECTED, PUB, revision)


def showing(event, committed_fact=None, rejected_through=0):
    return DisplayState(shown=event, committed=committed_fact, rejected_through=rejected_through)


# current state, incoming fact → action, what is shown after (None: nothing), temporary?
CASES = [
    # nothing yet
    ("first preview shows temporarily", None, preview(1), Action.SHOW, preview(1), True),
    ("first receipt shows", None, committed(1), Action.SHOW, committed(1), False),
    ("first rejection withholds", None, rejected(1), Action.WITHHOLD, None, False),
    # newer legitimate preview > older committed (temporary display only)
    (
        "newer preview beats older commit",
        showing(committed(1), committed(1)),
        preview(2, "y"),
        Action.SHOW,
        preview(2, "y"),
        True,
    ),
    (
        "older preview changes nothing",
        showing(committed(2), committed(2)),
        preview(1, "old"),
        Action.KEEP,
        committed(2),
        False,
    ),
    # committed receipt > same-revision preview
    (
        "receipt beats its own revision's preview",
        showing(preview(2, "y", hint="verified"), committed(1)),
        committed(2, "y", hint="sources_partial"),
        Action.SHOW,
        committed(2, "y", hint="sources_partial"),
        False,
    ),
    (
        "same-revision preview arriving after the receipt cannot dress it up",
        showing(
            committed(2, "y", hint="sources_partial"), committed(2, "y", hint="sources_partial")
        ),
        preview(2, "y", hint="verified"),
        Action.KEEP,
        committed(2, "y", hint="sources_partial"),
        False,
    ),
    (
        "older receipt arriving late changes nothing",
        showing(committed(3, "z"), committed(3, "z")),
        committed(2, "y"),
        Action.KEEP,
        committed(3, "z"),
        False,
    ),
    (
        "older receipt under a newer preview stays underneath",
        showing(preview(3, "z"), None),
        committed(2, "y"),
        Action.KEEP,
        preview(3, "z"),
        True,
    ),
    # current source rejection > both
    (
        "rejection withholds a committed revision",
        showing(committed(2), committed(2)),
        rejected(2),
        Action.WITHHOLD,
        None,
        False,
    ),
    (
        "rejection withholds a preview of the same revision",
        showing(preview(2), committed(1)),
        rejected(2),
        Action.WITHHOLD,
        None,
        False,
    ),
    (
        "rejected revision's late receipt stays withheld",
        showing(None, None, rejected_through=2),
        committed(2),
        Action.WITHHOLD,
        None,
        False,
    ),
    (
        "rejected revision's late preview stays withheld",
        showing(None, None, rejected_through=2),
        preview(1),
        Action.WITHHOLD,
        None,
        False,
    ),
    (
        "a newer revision after a rejection is a new fact",
        showing(None, committed(2), rejected_through=2),
        committed(3, "fresh"),
        Action.SHOW,
        committed(3, "fresh"),
        False,
    ),
    (
        "a rejection of an older revision keeps a newer display",
        showing(committed(3, "z"), committed(3, "z")),
        rejected(2),
        Action.KEEP,
        committed(3, "z"),
        False,
    ),
    # same publication ID + revision, different body → protocol conflict
    (
        "two receipts of one revision with different bodies conflict",
        showing(committed(2, "y"), committed(2, "y")),
        committed(2, "other"),
        Action.CONFLICT,
        committed(2, "y"),
        False,
    ),
    (
        "a preview and a receipt of one revision with different bodies conflict",
        showing(preview(2, "y"), committed(1)),
        committed(2, "other"),
        Action.CONFLICT,
        preview(2, "y"),
        True,
    ),
    (
        "two previews of one revision with different bodies conflict",
        showing(preview(2, "y"), committed(1)),
        preview(2, "other"),
        Action.CONFLICT,
        preview(2, "y"),
        True,
    ),
    (
        "the same receipt twice is no conflict",
        showing(committed(2, "y"), committed(2, "y")),
        committed(2, "y"),
        Action.SHOW,
        committed(2, "y"),
        False,
    ),
]


@pytest.mark.parametrize(
    ("current", "incoming", "action", "shown", "temporary"),
    [case[1:] for case in CASES],
    ids=[case[0] for case in CASES],
)
def test_display_precedence(current, incoming, action, shown, temporary):
    decision = decide_display(current, incoming)
    assert decision.action == action, decision.rule
    assert decision.state.shown == shown
    assert decision.state.temporary == temporary


def test_a_preview_that_is_never_saved_falls_back_to_the_committed_revision():
    state = decide_display(showing(committed(1), committed(1)), preview(2, "y")).state
    assert fall_back(state).shown == committed(1)


def test_a_fallback_never_shows_a_rejected_revision():
    state = DisplayState(shown=preview(3), committed=committed(2), rejected_through=2)
    assert fall_back(state).shown is None


def test_facts_about_two_different_blocks_are_a_callers_error():
    other = DisplayEvent(Kind.PREVIEW, "pub_bbbbbbbbbbbbbbbbbbbbbbbb", 1, "d")
    with pytest.raises(ValueError):
        decide_display(showing(committed(1), committed(1)), other)
