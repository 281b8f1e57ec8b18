"""The reader: current authorization, transitive dependencies, corrupt and legacy
records, and a query count that does not grow with the number of blocks."""

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from guardian.shortcuts import remove_perm

from publication.models import AnswerBlock, BlockRevision, PublicationAttempt
from publication.reader import PROTECTED, VISIBLE, RunReader
from runs.models import Run, RunEvent
from tests.publication.conftest import refs

pytestmark = pytest.mark.django_db


def states(run):
    return {b.id: b.state for b in RunReader(run).blocks()}


@pytest.fixture
def chain(live_run, publish):
    """X cites alice's memo; Y references X; Z references Y; W stands alone."""
    run = live_run()
    memo = refs(run)[1][0]
    public = refs(run)[0][0]
    x = publish(run, f"X：纪要 [[cite:{memo.pk}]]").publication_id
    y = publish(run, f"Y：承接 [[block:{x}]]").publication_id
    z = publish(run, f"Z：再承接 [[block:{y}]]").publication_id
    w = publish(run, f"W：公开报告 [[cite:{public.pk}]]").publication_id
    return run, x, y, z, w


def test_revoking_the_source_of_x_protects_the_blocks_inheriting_it_through_two_levels(
    chain, alice, knowledge
):
    run, x, y, z, w = chain
    assert set(states(run).values()) == {VISIBLE}

    remove_perm("knowledge.read_document", alice, knowledge.private_doc)

    assert states(run) == {x: PROTECTED, y: PROTECTED, z: PROTECTED, w: VISIBLE}
    protected = {b.id: b for b in RunReader(run).blocks()}
    assert protected[z].content is None and "content" not in protected[z].as_dict()
    # X's committed record stays for audit.
    assert BlockRevision.objects.get(block_id=x).content["text"].startswith("X：纪要")


def test_a_revoked_source_is_withheld_in_event_replay_too(chain, alice, knowledge):
    run, x, y, z, w = chain
    remove_perm("knowledge.read_document", alice, knowledge.private_doc)

    replay = RunReader(run).hydrate(RunEvent.objects.filter(run=run).order_by("seq"))

    published = {
        e["data"]["publicationId"]: e["data"] for e in replay if e["type"] == "answer.published"
    }
    assert {k: v["state"] for k, v in published.items()} == {
        x: PROTECTED,
        y: PROTECTED,
        z: PROTECTED,
        w: VISIBLE,
    }
    assert "content" not in published[x]
    previews = [e["data"] for e in replay if e["type"] == "answer.preview"]
    assert [p["state"] for p in previews] == [PROTECTED, PROTECTED, PROTECTED, VISIBLE]
    assert all("content" not in p for p in previews[:3])


def test_an_older_revision_in_replay_is_judged_on_its_own_sources(
    live_run, publish, alice, knowledge
):
    run = live_run()
    memo = refs(run)[1][0]
    block = publish(run, f"初稿 [[cite:{memo.pk}]]").publication_id
    publish(run, "修订稿，不再引用纪要", replaces=block)
    remove_perm("knowledge.read_document", alice, knowledge.private_doc)

    replay = RunReader(run).hydrate(RunEvent.objects.filter(run=run, type="answer.published"))

    assert [(e["data"]["revision"], e["data"]["state"]) for e in replay] == [
        (1, PROTECTED),
        (2, VISIBLE),
    ]
    assert states(run) == {block: VISIBLE}


@pytest.mark.parametrize(
    "garbage",
    [
        "garbage",
        {"type": "text", "text": 5},
        {"type": "table", "columns": "x", "rows": []},
        {"type": "table", "columns": ["a"], "rows": [[1]]},
        {"type": "text", "text": "被篡改的正文：摘要与提交时不符"},
        ["text", "x"],
    ],
    ids=["string", "text not a string", "columns not a list", "cell not text", "tampered", "list"],
)
def test_a_corrupt_block_is_protected_and_does_not_hide_the_others(chain, garbage):
    run, x, y, z, w = chain
    BlockRevision.objects.filter(block_id=w).update(content=garbage)

    assert states(run) == {x: VISIBLE, y: VISIBLE, z: VISIBLE, w: PROTECTED}
    replay = RunReader(run).hydrate(RunEvent.objects.filter(run=run, type="answer.published"))
    assert [e["data"]["state"] for e in replay] == [VISIBLE, VISIBLE, VISIBLE, PROTECTED]


def test_a_corrupt_dependency_does_not_hide_a_block_whose_inherited_sources_stand(chain):
    """Dependents inherit sources, not bodies: Y stays readable when X's body is garbage."""
    run, x, y, z, w = chain
    BlockRevision.objects.filter(block_id=x).update(content="garbage")
    assert states(run) == {x: PROTECTED, y: VISIBLE, z: VISIBLE, w: VISIBLE}


def test_a_block_whose_current_revision_is_missing_stays_listed_as_protected(chain):
    run, x, y, z, w = chain
    AnswerBlock.objects.filter(pk=w).update(current_revision=9)

    views = {b.id: b for b in RunReader(run).blocks()}
    assert (views[w].state, views[w].revision, views[w].source_hint) == (PROTECTED, 9, "unknown")
    assert views[x].state == VISIBLE


def test_a_legacy_revision_without_source_status_reads_unknown_which_is_not_none(live_run, publish):
    run = live_run()
    legacy = publish(run, "旧格式的段落").publication_id
    plain = publish(run, "没有引用的段落").publication_id
    BlockRevision.objects.filter(block_id=legacy).update(source_hint=None)

    hints = {b.id: b.source_hint for b in RunReader(run).blocks()}

    assert hints == {legacy: "unknown", plain: "none"}
    published = RunReader(run).hydrate(RunEvent.objects.filter(run=run, type="answer.published"))
    assert [e["data"]["sourceHint"] for e in published] == ["unknown", "none"]


def test_a_legacy_revision_is_never_an_exact_duplicate(live_run, publish):
    run = live_run()
    receipt = publish(run, "旧格式的段落")
    BlockRevision.objects.filter(block_id=receipt.publication_id).update(source_hint=None)

    again = publish(run, "旧格式的段落")

    assert again.outcome == PublicationAttempt.Outcome.COMMITTED
    assert again.publication_id != receipt.publication_id


def test_a_preview_whose_save_failed_is_never_read_as_a_block(live_run, publish, settings):
    run = live_run()
    settings.SPARKTIDE_FAULT = "during_publication_commit"
    publish(run, "只预览过")
    settings.SPARKTIDE_FAULT = ""

    assert RunReader(run).blocks() == []
    replay = RunReader(run).hydrate(RunEvent.objects.filter(run=run).order_by("seq"))
    assert [e["type"] for e in replay][-2:] == ["answer.preview", "answer.rejected"]
    assert not any(e["type"] == "answer.published" for e in replay)


# --- cost ---------------------------------------------------------------------------


def _fill(run, publish, count):
    public = refs(run)[0]
    memo = refs(run)[1][0]
    first = None
    for i in range(count):
        cite = public[i % len(public)].pk if i % 3 else memo.pk
        body = f"段落{i} [[cite:{cite}]]" + (f" [[block:{first}]]" if first else "")
        receipt = publish(run, body, preview=i % 2 == 0)
        first = first or receipt.publication_id
    assert AnswerBlock.objects.filter(run=run).count() == count


def _count(fn):
    with CaptureQueriesContext(connection) as context:
        fn()
    return len(context)


def _fresh(run):
    return Run.objects.select_related("tenant", "app", "owner").get(pk=run.pk)


def test_reading_the_answer_takes_the_same_number_of_queries_for_1_and_100_blocks(
    live_run, publish, django_assert_num_queries
):
    small, large = live_run(), live_run()
    _fill(small, publish, 1)
    _fill(large, publish, 100)

    small_run, large_run = _fresh(small), _fresh(large)

    queries = _count(lambda: RunReader(small_run).blocks())
    with django_assert_num_queries(queries):
        views = RunReader(large_run).blocks()
    assert len(views) == 100
    assert all(v.state == VISIBLE for v in views)


def test_hydrating_events_takes_the_same_number_of_queries_for_1_and_100_blocks(
    live_run, publish, django_assert_num_queries
):
    small, large = live_run(), live_run()
    _fill(small, publish, 1)
    _fill(large, publish, 100)
    small_events = list(RunEvent.objects.filter(run=small).order_by("seq"))
    large_events = list(RunEvent.objects.filter(run=large).order_by("seq"))
    small_run, large_run = _fresh(small), _fresh(large)

    queries = _count(lambda: RunReader(small_run).hydrate(small_events))
    with django_assert_num_queries(queries):
        hydrated = RunReader(large_run).hydrate(large_events)
    assert sum(1 for e in hydrated if e["type"] == "answer.published") == 100
    assert sum(1 for e in hydrated if e["type"] == "answer.preview") == 50
