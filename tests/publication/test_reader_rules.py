"""Rules of the reader that the rest of its tests left open (each found as a mutant of
publication/reader.py that survived them): a visible preview carries its body; a block
committed while the reader reads does not hide the revisions of the others; a preview is
judged on its own citations, inherited blocks and stored body; and what replay and the
answer say of each event and block, field by field."""

import logging

import pytest
from django.db import connection
from guardian.shortcuts import remove_perm

from publication.models import AnswerBlock, BlockRevision, PublicationAttempt
from publication.reader import PROTECTED, VISIBLE, RunReader, valid_content
from runs.models import RunEvent
from tests.publication.conftest import refs

pytestmark = pytest.mark.django_db


def test_a_visible_preview_in_replay_carries_the_body_it_previewed(live_run, publish):
    run = live_run()
    receipt = publish(run, "预览正文：营收增长")

    replay = RunReader(run).hydrate(RunEvent.objects.filter(run=run, type="answer.preview"))

    [preview] = [e["data"] for e in replay]
    attempt = PublicationAttempt.objects.get(candidate_id=receipt.candidate_id)
    assert preview["state"] == VISIBLE
    assert preview["content"] == attempt.content
    assert preview["content"]["text"] == "预览正文：营收增长"


def test_a_block_committed_while_the_reader_reads_does_not_hide_the_revisions_of_the_others(
    live_run, publish
):
    """The reader lists the run's blocks, then their revisions, in two queries. A block
    committed between them has revisions but no listed block: it is left for the next
    read, and every revision of the listed blocks is still returned."""
    run = live_run()
    block = publish(run, "初稿").publication_id
    publish(run, "修订稿", replaces=block)
    late: list[str] = []

    listed: list[bool] = []

    def commit_a_block_after_the_blocks_are_listed(execute, sql, params, many, context):
        # The commit goes in before the reader's next statement, once the listing's rows
        # are all read: SQLite steps a SELECT's rows lazily on the connection, so a write
        # made as the listing statement returns would show in its own rows.
        if listed and not late:
            late.append("")
            late[0] = publish(run, "读取期间提交的新段落").publication_id
        result = execute(sql, params, many, context)
        if sql.lstrip().upper().startswith("SELECT") and sql.split(" WHERE ")[0].rstrip().endswith(
            f'FROM "{AnswerBlock._meta.db_table}"'
        ):
            listed.append(True)
        return result

    reader = RunReader(run)
    with connection.execute_wrapper(commit_a_block_after_the_blocks_are_listed):
        views = reader.revisions()

    assert late, "the reader never listed the blocks"
    assert late[0] not in views  # committed after the listing: the next read shows it
    assert [(v.revision, v.content["text"]) for v in views[block]] == [(1, "初稿"), (2, "修订稿")]
    assert RunReader(run).revisions()[late[0]][0].content["text"] == "读取期间提交的新段落"


def test_a_block_inheriting_a_revoked_source_beside_a_shared_dependency_is_withheld(
    live_run, publish, alice, knowledge
):
    """A block that reaches one dependency twice (directly and through another block) is
    still judged on every block it inherits: meeting the shared one again ends nothing."""
    run = live_run()
    memo = refs(run)[1][0]
    revoked = publish(run, f"R：纪要 [[cite:{memo.pk}]]").publication_id
    shared = publish(run, "B：无来源").publication_id
    through = publish(run, f"C：承接 [[block:{shared}]]").publication_id
    # Both orders of the same three dependencies, so one of them meets the shared block
    # again before the revoked one whichever way the traversal takes them.
    forward = publish(run, f"A1 [[block:{revoked}]] [[block:{shared}]] [[block:{through}]]")
    backward = publish(run, f"A2 [[block:{through}]] [[block:{shared}]] [[block:{revoked}]]")
    remove_perm("knowledge.read_document", alice, knowledge.private_doc)

    for block in (forward.publication_id, backward.publication_id):
        assert RunReader(run).block_withheld(block), block  # a fresh graph: nothing cached
    assert not RunReader(run).block_withheld(through)


# --- what replay says of each answer event (mutants of the reader's hydration) --------


def _replayed(run, type_):
    return [
        e["data"]
        for e in RunReader(run).hydrate(RunEvent.objects.filter(run=run).order_by("seq"))
        if e["type"] == type_
    ]


def _preview_only(run, publish, settings, body):
    """A preview whose commit failed: no block stands behind it (block_id is None)."""
    settings.SPARKTIDE_FAULT = "during_publication_commit"
    try:
        receipt = publish(run, body)
    finally:
        settings.SPARKTIDE_FAULT = ""
    attempt = PublicationAttempt.objects.get(candidate_id=receipt.candidate_id)
    assert attempt.block_id is None
    return attempt


def test_a_preview_citing_a_source_revoked_since_is_withheld_though_no_block_stands_behind_it(
    live_run, publish, settings, alice, knowledge
):
    """A preview is judged on its own citations, now: with no committed block to be
    withheld, the reference it cited decides."""
    run = live_run()
    memo = refs(run)[1][0]
    _preview_only(run, publish, settings, f"纪要称 [[cite:{memo.pk}]]")
    [before] = _replayed(run, "answer.preview")
    assert before["state"] == VISIBLE
    assert before["content"]["text"].startswith("纪要称")

    remove_perm("knowledge.read_document", alice, knowledge.private_doc)

    [after] = _replayed(run, "answer.preview")
    assert after["state"] == PROTECTED
    assert "content" not in after


def test_a_preview_inheriting_a_block_withheld_now_is_withheld_and_its_own_block_is_not_inherited(
    live_run, publish, settings, alice, knowledge
):
    """A preview that references a block inherits that block's sources; the block it
    revises (``replaces``) is not inherited: its new body stands on its own sources."""
    run = live_run()
    memo = refs(run)[1][0]
    cited = publish(run, f"X：纪要 [[cite:{memo.pk}]]").publication_id
    inheriting = _preview_only(run, publish, settings, f"承接 [[block:{cited}]]")
    standalone = _preview_only(run, publish, settings, "无来源的独立段落")
    assert [p["state"] for p in _replayed(run, "answer.preview")[1:]] == [VISIBLE, VISIBLE]

    remove_perm("knowledge.read_document", alice, knowledge.private_doc)

    by_candidate = {
        p["candidateId"]: p for p in _replayed(run, "answer.preview") if "candidateId" in p
    }
    assert by_candidate[inheriting.candidate_id]["state"] == PROTECTED
    assert by_candidate[standalone.candidate_id]["state"] == VISIBLE
    assert by_candidate[standalone.candidate_id]["content"]["text"] == "无来源的独立段落"


def test_a_preview_revising_a_block_is_not_judged_on_the_block_it_replaces(
    live_run, publish, settings
):
    """The revision's body may name the block it replaces; that block is not a
    dependency of its own revision, so a corrupt current record of it hides nothing."""
    run = live_run()
    block = publish(run, "初稿").publication_id
    attempt = _preview_only(run, publish, settings, f"修订稿，取代 [[block:{block}]]")
    PublicationAttempt.objects.filter(pk=attempt.pk).update(replaces=block)
    AnswerBlock.objects.filter(pk=block).update(current_revision=99)  # its record is missing

    [_, preview] = _replayed(run, "answer.preview")
    assert preview["state"] == VISIBLE


def test_a_preview_whose_stored_body_is_not_valid_is_withheld(live_run, publish, settings):
    run = live_run()
    attempt = _preview_only(run, publish, settings, "只预览过")
    PublicationAttempt.objects.filter(pk=attempt.pk).update(content={"type": "text", "text": 7})

    [preview] = _replayed(run, "answer.preview")
    assert preview["state"] == PROTECTED
    assert "content" not in preview


def test_a_preview_carries_its_own_source_hint_and_an_unknown_one_without_its_attempt(
    live_run, publish
):
    run = live_run()
    public = refs(run)[0][0]
    receipt = publish(run, f"报告称 [[cite:{public.pk}]]")
    attempt = PublicationAttempt.objects.get(candidate_id=receipt.candidate_id)
    assert attempt.source_hint == "verified"
    [preview] = _replayed(run, "answer.preview")
    assert preview["sourceHint"] == "verified"

    PublicationAttempt.objects.filter(pk=attempt.pk).delete()
    [gone] = _replayed(run, "answer.preview")
    assert (gone["state"], gone["sourceHint"]) == (PROTECTED, "unknown")
    assert "content" not in gone


def test_a_published_event_carries_its_revision_body_hint_and_truncation(live_run, publish):
    run = live_run()
    public = refs(run)[0][0]
    block = publish(run, f"报告称 [[cite:{public.pk}]]").publication_id
    BlockRevision.objects.filter(block_id=block).update(truncated=True)
    revision = BlockRevision.objects.get(block_id=block)

    [published] = _replayed(run, "answer.published")
    assert published["state"] == VISIBLE
    assert published["content"] == revision.content
    assert (published["sourceHint"], published["truncated"]) == ("verified", True)

    BlockRevision.objects.filter(block_id=block).update(truncated=False)
    [again] = _replayed(run, "answer.published")
    assert again["truncated"] is False


def test_a_published_event_whose_revision_is_gone_is_protected_unknown_and_not_truncated(
    live_run, publish
):
    run = live_run()
    block = publish(run, "正文", preview=False).publication_id
    BlockRevision.objects.filter(block_id=block).update(truncated=True)
    event = RunEvent.objects.get(run=run, type="answer.published")
    RunEvent.objects.filter(pk=event.pk).update(data={**event.data, "revision": 99})

    [published] = _replayed(run, "answer.published")
    assert published["state"] == PROTECTED
    assert (published["sourceHint"], published["truncated"]) == ("unknown", False)
    assert "content" not in published


def test_events_read_as_rows_keep_their_seq_type_time_and_data(live_run, publish):
    """``hydrate_rows`` (the socket's replay) fills in the answer events and passes
    every other event on with its own seq, type, time and stored data."""
    run = live_run()
    publish(run, "正文", preview=False)
    events = list(RunEvent.objects.filter(run=run).order_by("seq"))
    rows = [(e.seq, e.type, e.data, e.at) for e in events]

    hydrated = RunReader(run).hydrate_rows(rows)

    assert [(h["seq"], h["type"], h["at"]) for h in hydrated] == [
        (e.seq, e.type, e.at.isoformat()) for e in events
    ]
    assert all(set(h) == {"seq", "type", "at", "data"} for h in hydrated)
    others = [(h, e) for h, e in zip(hydrated, events, strict=True) if e.type != "answer.published"]
    assert others and all(h["data"] == e.data for h, e in others)
    [published] = [h for h in hydrated if h["type"] == "answer.published"]
    assert published["data"]["content"]["text"] == "正文"


def test_a_block_reads_as_the_fields_of_the_answer_contract(live_run, publish):
    run = live_run()
    publish(run, "正文", preview=False)

    [view] = RunReader(run).blocks()
    assert view.as_dict() == {
        "id": view.id,
        "revision": 1,
        "deliveryOrdinal": view.delivery_ordinal,
        "state": VISIBLE,
        "sourceHint": view.source_hint,
        "truncated": False,
        "content": {"type": "text", "text": "正文"},
    }


@pytest.mark.parametrize(
    "content",
    [
        {"type": "table", "columns": "ab", "rows": []},
        {"type": "table", "columns": ["a"], "rows": ["ab"]},
        {"type": "table", "columns": ["a", 1], "rows": []},
    ],
)
def test_a_table_whose_columns_or_rows_are_not_lists_of_strings_is_not_a_valid_body(content):
    assert not valid_content(content)
    assert valid_content({"type": "table", "columns": ["a"], "rows": [["1"]]})


INVALID_BODIES = [
    "garbage",
    ["text", "x"],
    {"type": "image", "url": "x"},
    {"type": "text", "text": 7},
]
INVALID_IDS = ["a string", "a list", "another type", "text not a string"]


@pytest.mark.parametrize("body", INVALID_BODIES, ids=INVALID_IDS)
def test_a_stored_body_that_is_not_valid_is_protected_even_with_a_matching_digest(
    live_run, publish, settings, body
):
    """The body's shape is checked on its own, not only through its digest: a record
    rewritten with a digest to match (a tampered store), or a preview (which has no
    digest), is still protected when its body is not one the clients can render."""
    from publication.pipeline import body_digest

    run = live_run()
    block = publish(run, "正文", preview=False).publication_id
    BlockRevision.objects.filter(block_id=block).update(content=body, body_digest=body_digest(body))
    attempt = _preview_only(run, publish, settings, "只预览过")
    PublicationAttempt.objects.filter(pk=attempt.pk).update(content=body)

    [view] = RunReader(run).blocks()
    assert view.state == PROTECTED
    [preview] = _replayed(run, "answer.preview")[-1:]
    assert preview["state"] == PROTECTED and "content" not in preview


def test_a_revision_that_does_not_match_its_digest_is_logged_with_its_ids(
    live_run, publish, caplog
):
    run = live_run()
    block = publish(run, "正文", preview=False).publication_id
    BlockRevision.objects.filter(block_id=block).update(content={"type": "text", "text": "改过"})
    revision = BlockRevision.objects.get(block_id=block)

    with caplog.at_level(logging.ERROR, logger="publication.reader"):
        [view] = RunReader(run).blocks()

    assert view.state == PROTECTED
    assert [r.getMessage() for r in caplog.records if r.name == "publication.reader"] == [
        f"revision {revision.pk} of {block} does not match its digest"
    ]


def test_a_block_missing_its_revision_keeps_its_place_and_fields_and_hides_no_later_block(
    live_run, publish, caplog
):
    run = live_run()
    first = publish(run, "第一段", preview=False).publication_id
    second = publish(run, "第二段", preview=False).publication_id
    AnswerBlock.objects.filter(pk=first).update(current_revision=9)
    block = AnswerBlock.objects.get(pk=first)

    with caplog.at_level(logging.ERROR, logger="publication.reader"):
        views = RunReader(run).blocks()

    assert [v.id for v in views] == [first, second]
    missing = views[0]
    assert (missing.state, missing.revision, missing.content, missing.truncated) == (
        PROTECTED,
        9,
        None,
        False,
    )
    assert (missing.delivery_ordinal, missing.origin) == (block.delivery_ordinal, block.origin)
    assert views[1].state == VISIBLE
    assert [r.getMessage() for r in caplog.records if r.name == "publication.reader"] == [
        f"block {first} has no revision 9"
    ]


def test_a_blocks_view_carries_its_delivery_ordinal_and_origin(live_run, publish):
    run = live_run()
    publish(run, "第一段", preview=False, entry="A")
    publish(run, "第二段", preview=False, entry="B")
    blocks = {b.pk: b for b in AnswerBlock.objects.filter(run=run)}

    views = RunReader(run).blocks()
    revised = RunReader(run).revisions()

    assert [(v.delivery_ordinal, v.origin) for v in views] == [
        (blocks[v.id].delivery_ordinal, blocks[v.id].origin) for v in views
    ]
    assert {v.origin for v in views} == {"A", "B"}
    assert sorted(v.delivery_ordinal for v in views) == [1, 2]
    assert all(
        (r.delivery_ordinal, r.origin) == (blocks[bid].delivery_ordinal, blocks[bid].origin)
        for bid, rs in revised.items()
        for r in rs
    )
