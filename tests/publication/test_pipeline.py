"""publish_candidate, one rule per test, on real scripted runs and direct calls
against runs the engine executed (DESIGN.md "Publication", seed 004)."""

import pytest
from django.utils import timezone
from guardian.shortcuts import remove_perm

from citations.models import NumericHandle
from knowledge.models import Lease
from publication.models import (
    AnswerBlock,
    BlockDependency,
    BlockRevision,
    PublicationAttempt,
    SourceBinding,
)
from publication.pipeline import MAX_DISPLAY_CHARS, TRUNCATION_NOTE, VALUE_UNAVAILABLE
from publication.reader import RunReader
from runs.models import Run, RunEvent
from tests.publication.conftest import refs

pytestmark = pytest.mark.django_db

Outcome = PublicationAttempt.Outcome


def events(run, type):
    return list(RunEvent.objects.filter(run=run, type=type).order_by("seq"))


def snapshot(run):
    """Everything a modification could change, to show a refusal changed nothing."""
    run.refresh_from_db()
    return {
        "blocks": list(AnswerBlock.objects.filter(run=run).values_list("pk", "current_revision")),
        "revisions": list(
            BlockRevision.objects.filter(block__run=run).values_list("pk", "content")
        ),
        "bindings": SourceBinding.objects.filter(revision__block__run=run).count(),
        "published": RunEvent.objects.filter(run=run, type="answer.published").count(),
        "counters": (run.block_count, run.revision_quota_used),
    }


# --- source proof: the seed's A/B example ----------------------------------------


def test_seed_example_a_degrades_while_b_citing_an_unauthorized_private_report_is_rejected(
    make_run, bob
):
    """A's misspelt public citation degrades to sources_unverified; B cites a real
    reference of another run whose restricted document bob may not read: B alone
    is refused, A stays committed."""
    alices = make_run({"search": "内部投研纪要 营收预测", "topK": 5})
    private = refs(alices)[1][0].pk
    run = make_run(
        {"search": "营收", "topK": 3},
        {"answerPart": "A：营收增长 12% [[cite:{{c1}}x]]"},
        {"answerPart": f"B：内部纪要称预测上调 [[cite:{private}]]"},
        {"text": "C：结论见上。"},
        owner=bob,
    )

    assert run.status == Run.Status.COMPLETED
    attempts = list(PublicationAttempt.objects.filter(run=run).order_by("id"))
    assert [(a.outcome, a.reason) for a in attempts] == [
        (Outcome.COMMITTED, ""),
        (Outcome.REJECTED, "SOURCE_NOT_AUTHORIZED"),
        (Outcome.COMMITTED, ""),
    ]
    a, c = RunReader(run).blocks()
    assert a.source_hint == "sources_unverified"
    assert a.content["text"].startswith(
        "A：营收增长 12% [[cite:cite_"
    )  # body kept, marker in place
    assert c.source_hint == "none"
    rejected = events(run, "answer.rejected")[0].data
    assert (rejected["code"], rejected["effect"], rejected["source"]) == (
        "SOURCE_NOT_AUTHORIZED",
        "create",
        private,
    )
    assert "publicationId" not in rejected
    stored = BlockRevision.objects.filter(block__run=run).values_list("content", flat=True)
    assert not any("内部纪要" in c["text"] for c in stored)


def test_an_own_source_whose_document_access_was_revoked_rejects_the_block(
    live_run, publish, alice, knowledge
):
    run = live_run()
    memo = refs(run)[1][0]
    remove_perm("knowledge.read_document", alice, knowledge.private_doc)

    receipt = publish(run, f"纪要 [[cite:{memo.pk}]]")

    assert (receipt.outcome, receipt.reason) == (Outcome.REJECTED, "SOURCE_NOT_AUTHORIZED")
    assert not receipt.saved
    assert not AnswerBlock.objects.filter(run=run).exists()


def test_a_source_whose_lease_was_revoked_rejects_the_block(live_run, publish, app, knowledge):
    run = live_run()
    public = refs(run)[0][0]
    Lease.objects.filter(app=app, version=knowledge).update(revoked_at=timezone.now())

    receipt = publish(run, f"营收 [[cite:{public.pk}]]")

    assert (receipt.outcome, receipt.reason) == (Outcome.REJECTED, "SOURCE_NOT_AUTHORIZED")


def test_a_readable_source_this_call_did_not_retrieve_degrades_to_unverified(
    make_run, live_run, publish
):
    other = make_run({"search": "现金流", "topK": 1})
    borrowed = refs(other)[0][0]
    run = live_run()

    receipt = publish(run, f"借用 [[cite:{borrowed.pk}]]")

    assert (receipt.outcome, receipt.source_hint) == (Outcome.COMMITTED, "sources_unverified")
    binding = SourceBinding.objects.get(revision__block_id=receipt.publication_id)
    assert (binding.citation_id, binding.verified) == (borrowed.pk, False)


def test_own_citations_are_verified_and_a_mix_is_partial(live_run, publish):
    run = live_run()
    public = refs(run)[0][0]

    verified = publish(run, f"营收 [[cite:{public.pk}]]")
    partial = publish(run, f"营收 [[cite:{public.pk}]] 伪 [[cite:cite_forged]]")

    assert verified.source_hint == "verified"
    assert partial.source_hint == "sources_partial"


# --- degrade, don't drop -----------------------------------------------------------


def test_unknown_and_malformed_citations_degrade_in_place_and_keep_the_body(live_run, publish):
    run = live_run()
    body = (
        "伪 [[cite:cite_forgedforgedforgedforged0]] 空 [[cite:]] 截 [[cite:cite_ab]] "
        "旧 [cite_zzzzzzzzzzzzzzzzzzzzzzzz] 链接 [cite_x](http://e.example) 未闭合 [[cite:cite_a"
    )

    receipt = publish(run, body)

    assert (receipt.outcome, receipt.source_hint) == (Outcome.COMMITTED, "sources_unverified")
    [block] = RunReader(run).blocks()
    assert block.content == {"type": "text", "text": body}
    bindings = SourceBinding.objects.filter(revision__block_id=receipt.publication_id)
    assert sorted(bindings.values_list("cited_id", "citation_id", "verified")) == sorted(
        [
            ("cite_forgedforgedforgedforged0", None, False),
            ("", None, False),
            ("cite_ab", None, False),
            ("cite_zzzzzzzzzzzzzzzzzzzzzzzz", None, False),
        ]
    )


def test_invalid_numeric_handles_render_value_unavailable_and_never_a_guess(
    make_run, live_run, publish
):
    """A bogus, empty or garbled handle, and a real handle of another run (whose
    value would be 12%), all render the explicit marker; the body stays."""
    other = make_run({"search": "营收增长12%", "topK": 1})
    foreign = NumericHandle.objects.get(run=other)
    run = live_run()

    receipt = publish(
        run, f"甲 [[num:num_bogus]] 乙 [[num:]] 丙 [[num:{foreign.pk}]] 丁 [[num:{foreign.pk}x]]"
    )

    text = RunReader(run).blocks()[0].content["text"]
    assert (
        text
        == f"甲 {VALUE_UNAVAILABLE} 乙 {VALUE_UNAVAILABLE} 丙 {VALUE_UNAVAILABLE} 丁 {VALUE_UNAVAILABLE}"
    )
    assert "12" not in text
    assert receipt.source_hint == "sources_unverified"


def test_a_valid_numeric_handle_renders_its_value_and_binds_its_source(
    live_run, publish, alice, knowledge
):
    run = live_run()
    handle = NumericHandle.objects.get(run=run)

    receipt = publish(run, f"营收增长 [[num:{handle.pk}]]，另 [[num:num_bogus]]")

    assert RunReader(run).blocks()[0].content["text"] == f"营收增长 12%，另 {VALUE_UNAVAILABLE}"
    assert receipt.source_hint == "sources_partial"
    binding = SourceBinding.objects.get(revision__block_id=receipt.publication_id)
    assert (binding.cited_id, binding.citation_id, binding.verified) == (
        f"num:{handle.pk}",
        handle.citation_id,
        True,
    )


def test_a_handle_whose_source_was_revoked_renders_value_unavailable(
    live_run, publish, app, knowledge
):
    run = live_run()
    handle = NumericHandle.objects.get(run=run)
    Lease.objects.filter(app=app, version=knowledge).update(revoked_at=timezone.now())

    publish(run, f"营收增长 [[num:{handle.pk}]]")

    assert (
        BlockRevision.objects.get(block__run=run).content["text"] == f"营收增长 {VALUE_UNAVAILABLE}"
    )


# --- prepare ----------------------------------------------------------------------------


def test_control_characters_are_removed_and_line_endings_unified(live_run, publish):
    run = live_run()

    publish(run, "第一行\r\n第二\x00行\r第三\x07行\u2028第四\u200b行\x1b[31m\ufeff\t尾\ud800")

    assert (
        RunReader(run).blocks()[0].content["text"] == "第一行\n第二行\n第三行\n第四行[31m\t尾\ufffd"
    )


def test_a_control_character_inside_a_marker_cannot_smuggle_an_unproven_source(
    make_run, live_run, publish, bob
):
    """Cleanup happens before the proof: the marker proven is the marker stored."""
    alices = make_run({"search": "内部投研纪要 营收预测", "topK": 5})
    private = refs(alices)[1][0].pk
    run = live_run(owner=bob)

    receipt = publish(run, f"纪要 [[cite:{private[:8]}\x00{private[8:]}]]")

    assert (receipt.outcome, receipt.reason) == (Outcome.REJECTED, "SOURCE_NOT_AUTHORIZED")


def test_a_body_over_60000_display_characters_keeps_a_truncated_prefix_without_cutting_a_marker(
    live_run, publish
):
    run = live_run()
    public = refs(run)[0][0]
    handle = NumericHandle.objects.get(run=run)
    marker = f"[[cite:{public.pk}]]"
    budget = MAX_DISPLAY_CHARS - len(TRUNCATION_NOTE)
    head = "营" * (budget - 10)
    body = (
        head
        + marker
        + f"尾部引用 [[cite:cite_tailtailtailtailtailtail]] [[num:{handle.pk}]]"
        + "收" * 100
    )

    receipt = publish(run, body)

    text = BlockRevision.objects.get(block__run=run).content["text"]
    assert receipt.truncated and receipt.outcome == Outcome.COMMITTED
    assert text == head + TRUNCATION_NOTE  # the straddling marker went whole, not in half
    assert len(text) <= MAX_DISPLAY_CHARS
    # Only what is stored is bound: the cut-off markers are no dependency.
    assert not SourceBinding.objects.filter(revision__block__run=run).exists()
    assert receipt.source_hint == "none"
    assert RunReader(run).blocks()[0].truncated


def test_a_table_body_renders_values_in_its_cells(live_run, publish):
    run = live_run()
    handle = NumericHandle.objects.get(run=run)
    public = refs(run)[0][0]

    receipt = publish(
        run,
        {
            "type": "table",
            "columns": ["指标", "数值"],
            "rows": [["营收增长", f"[[num:{handle.pk}]] [[cite:{public.pk}]]"], ["毛利率", None]],
        },
    )

    assert receipt.source_hint == "verified"
    assert RunReader(run).blocks()[0].content == {
        "type": "table",
        "columns": ["指标", "数值"],
        "rows": [["营收增长", f"12% [[cite:{public.pk}]]"], ["毛利率", ""]],
    }


@pytest.mark.parametrize("body", ["", "  \n\t ", {"type": "chart", "data": [1]}, {"rows": 3}])
def test_a_candidate_without_a_readable_body_is_rejected_and_nothing_is_invented(
    live_run, publish, body
):
    run = live_run()
    receipt = publish(run, body)
    assert (receipt.outcome, receipt.reason) == (Outcome.REJECTED, "EMPTY_CANDIDATE")
    assert not AnswerBlock.objects.filter(run=run).exists()


# --- revision rules: replaces ---------------------------------------------------------


@pytest.mark.parametrize(
    "replaces",
    [
        "pub_unknownunknownunknown00",
        "another run's",
        "garbage\x00" + "x" * 500,
        " ",
        "[[block:pub_x]]",
        123,
        ["pub_x"],
    ],
)
def test_an_invalid_replaces_is_a_failed_modification_never_a_new_block(
    make_run, live_run, publish, replaces
):
    other = make_run({"answerPart": "别的运行的段落"})
    if replaces == "another run's":
        replaces = AnswerBlock.objects.get(run=other).pk
    run = live_run()
    original = publish(run, "已提交的正文")
    before = snapshot(run)

    receipt = publish(run, "修改后的正文", replaces=replaces)

    assert (receipt.outcome, receipt.reason, receipt.effect) == (
        Outcome.REJECTED,
        "REPLACES_TARGET_INVALID",
        "revise",
    )
    assert receipt.publication_id is None
    assert snapshot(run) == before
    assert [b.content["text"] for b in RunReader(run).blocks()] == ["已提交的正文"]
    assert AnswerBlock.objects.get(run=other).current_revision == 1
    assert events(run, "answer.rejected")[-1].data["code"] == "REPLACES_TARGET_INVALID"
    attempt = PublicationAttempt.objects.get(candidate_id=receipt.candidate_id)
    assert attempt.block is None and len(attempt.replaces) <= 200
    assert original.saved


def test_a_valid_replaces_revises_the_block_in_place(live_run, publish):
    run = live_run()
    first = publish(run, "初稿")

    second = publish(run, "修订稿", replaces=first.publication_id)

    assert (second.outcome, second.publication_id, second.revision, second.delivery_ordinal) == (
        Outcome.COMMITTED,
        first.publication_id,
        2,
        first.delivery_ordinal,
    )
    assert [(b.revision, b.content["text"]) for b in RunReader(run).blocks()] == [(2, "修订稿")]
    assert BlockRevision.objects.filter(block_id=first.publication_id).count() == 2


# --- quotas -----------------------------------------------------------------------------


def test_a_block_takes_two_revisions_and_the_third_is_refused_with_content_intact(
    live_run, publish
):
    run = live_run()
    block = publish(run, "v1").publication_id
    assert publish(run, "v2", replaces=block).outcome == Outcome.COMMITTED
    assert publish(run, "v3", replaces=block).outcome == Outcome.COMMITTED

    refused = publish(run, "v4", replaces=block)

    assert (refused.outcome, refused.reason, refused.publication_id) == (
        Outcome.REJECTED,
        "BLOCK_REVISION_QUOTA_EXCEEDED",
        block,
    )
    assert [(b.revision, b.content["text"]) for b in RunReader(run).blocks()] == [(3, "v3")]
    assert publish(run, "新的段落").outcome == Outcome.COMMITTED  # new blocks are not limited


def test_a_run_takes_eight_revisions_and_the_ninth_is_refused(live_run, publish):
    run = live_run()
    blocks = [publish(run, f"段落{i}").publication_id for i in range(5)]
    for i in range(8):
        receipt = publish(run, f"段落{i // 2} 修订{i}", replaces=blocks[i // 2])
        assert receipt.outcome == Outcome.COMMITTED, receipt

    refused = publish(run, "段落4 修订", replaces=blocks[4])

    assert (refused.outcome, refused.reason) == (Outcome.REJECTED, "RUN_REVISION_QUOTA_EXCEEDED")
    run.refresh_from_db()
    assert run.revision_quota_used == 8
    assert RunReader(run).blocks()[4].content["text"] == "段落4"


def test_a_new_block_still_commits_after_the_run_revision_quota_is_spent(live_run, publish):
    """The run quota limits revisions only: a new block is a new fact and always commits."""
    run = live_run()
    blocks = [publish(run, f"段落{i}").publication_id for i in range(5)]
    for i in range(8):
        assert publish(run, f"修订{i}", replaces=blocks[i // 2]).outcome == Outcome.COMMITTED
    assert publish(run, "再修订", replaces=blocks[4]).reason == "RUN_REVISION_QUOTA_EXCEEDED"

    fresh = publish(run, "新的段落")

    assert fresh.outcome == Outcome.COMMITTED
    assert [b.content["text"] for b in RunReader(run).blocks()][-1] == "新的段落"


def test_recovery_never_rewrites_a_committed_attempt(live_run, publish):
    """A dead worker's committed blocks stay COMMITTED, revision and body untouched."""
    from runtime.recovery import recover_run

    run = live_run()
    first = publish(run, "已提交的段落")
    revised = publish(run, "已提交的修订", replaces=first.publication_id)
    committed = dict(
        PublicationAttempt.objects.filter(run=run).values_list("candidate_id", "outcome")
    )
    bodies = list(BlockRevision.objects.filter(block__run=run).values_list("pk", "content"))

    recovered = recover_run(run)

    assert recovered.status == Run.Status.PARTIAL
    after = dict(PublicationAttempt.objects.filter(run=run).values_list("candidate_id", "outcome"))
    assert after[first.candidate_id] == after[revised.candidate_id] == Outcome.COMMITTED
    assert after == committed
    assert list(BlockRevision.objects.filter(block__run=run).values_list("pk", "content")) == bodies
    assert [(b.revision, b.content["text"]) for b in RunReader(run).blocks()] == [
        (2, "已提交的修订")
    ]


def test_a_visible_preview_consumes_quota_even_if_its_save_then_fails(live_run, publish, settings):
    run = live_run()
    block = publish(run, "v1").publication_id
    settings.SPARKTIDE_FAULT = "during_publication_commit"

    failed = publish(run, "v2（保存失败）", replaces=block, preview=True)

    settings.SPARKTIDE_FAULT = ""
    assert (failed.outcome, failed.reason) == (Outcome.REJECTED, "SAVE_FAILED")
    attempt = PublicationAttempt.objects.get(candidate_id=failed.candidate_id)
    assert attempt.quota_consumed
    run.refresh_from_db()
    assert run.revision_quota_used == 1
    assert [e.data["candidateId"] for e in events(run, "answer.preview")][-1] == failed.candidate_id
    assert publish(run, "v2", replaces=block).outcome == Outcome.COMMITTED
    assert publish(run, "v3", replaces=block).reason == "BLOCK_REVISION_QUOTA_EXCEEDED"
    assert RunReader(run).blocks()[0].content["text"] == "v2"


def test_a_save_that_fails_without_a_visible_preview_consumes_no_quota(live_run, publish, settings):
    run = live_run()
    block = publish(run, "v1").publication_id
    settings.SPARKTIDE_FAULT = "during_publication_commit"

    failed = publish(run, "v2", replaces=block, preview=False)

    settings.SPARKTIDE_FAULT = ""
    assert failed.reason == "SAVE_FAILED"
    run.refresh_from_db()
    assert run.revision_quota_used == 0
    assert not PublicationAttempt.objects.get(candidate_id=failed.candidate_id).quota_consumed


# --- exact duplicates -------------------------------------------------------------------------


def test_an_exact_duplicate_is_unchanged_and_reuses_the_original_receipt(live_run, publish):
    run = live_run()
    public = refs(run)[0][0]
    body = f"营收增长 12% [[cite:{public.pk}]]"
    original = publish(run, body)
    before = snapshot(run)
    previews = len(events(run, "answer.preview"))

    again = publish(run, body, entry="A")

    assert again.outcome == Outcome.UNCHANGED and again.saved
    assert (again.publication_id, again.revision, again.delivery_ordinal, again.body_digest) == (
        original.publication_id,
        original.revision,
        original.delivery_ordinal,
        original.body_digest,
    )
    assert again.source_hint == original.source_hint == "verified"
    assert snapshot(run) == before
    assert len(events(run, "answer.preview")) == previews


def test_an_exact_duplicate_revision_is_unchanged_and_takes_no_quota(live_run, publish):
    run = live_run()
    block = publish(run, "v1").publication_id
    assert publish(run, "v2", replaces=block).revision == 2

    again = publish(run, "v2", replaces=block)

    assert (again.outcome, again.revision) == (Outcome.UNCHANGED, 2)
    run.refresh_from_db()
    assert run.revision_quota_used == 1


def test_a_whitespace_change_is_not_a_duplicate(live_run, publish):
    run = live_run()
    block = publish(run, "营收增长").publication_id

    changed = publish(run, "营收增长 ", replaces=block)
    new_block = publish(run, "营收增长\n")

    assert changed.outcome == Outcome.COMMITTED and changed.revision == 2
    assert new_block.outcome == Outcome.COMMITTED and new_block.publication_id != block


def test_a_revoked_source_makes_a_byte_identical_repeat_fail_instead_of_unchanged(
    live_run, publish, alice, knowledge
):
    run = live_run()
    memo = refs(run)[1][0]
    body = f"纪要称营收预测上调 [[cite:{memo.pk}]]"
    original = publish(run, body)
    remove_perm("knowledge.read_document", alice, knowledge.private_doc)

    again = publish(run, body)

    assert (again.outcome, again.reason) == (Outcome.REJECTED, "SOURCE_NOT_AUTHORIZED")
    assert RunReader(run).blocks()[0].state == "protected"
    assert BlockRevision.objects.filter(block_id=original.publication_id).count() == 1


def test_a_same_body_with_a_changed_source_status_is_not_a_duplicate(make_run, live_run, publish):
    """Identical bytes but different bindings: a new revision, not UNCHANGED."""
    run = live_run()
    public = refs(run)[0][0]
    block = publish(run, "营收 [[cite:cite_forged]]").publication_id
    body = f"营收 [[cite:{public.pk}]]"
    assert publish(run, body, replaces=block).revision == 2
    BlockRevision.objects.filter(block_id=block, revision=2).update(source_hint="sources_partial")

    again = publish(run, body, replaces=block)

    assert (again.outcome, again.revision) == (Outcome.COMMITTED, 3)


# --- commit -----------------------------------------------------------------------------


def test_a_commit_writes_revision_bindings_dependencies_event_and_counters(live_run, publish):
    run = live_run()
    public = refs(run)[0]
    first = publish(run, "甲")

    receipt = publish(
        run,
        f"乙 [[cite:{public[0].pk}]] [[cite:{public[1].pk}]] 承 [[block:{first.publication_id}]]",
    )

    revision = BlockRevision.objects.get(block_id=receipt.publication_id)
    assert revision.attempt.candidate_id == receipt.candidate_id
    assert revision.attempt.outcome == Outcome.COMMITTED
    assert revision.bindings.count() == 2
    assert list(revision.dependencies.values_list("depends_on_id", flat=True)) == [
        first.publication_id
    ]
    published = events(run, "answer.published")[-1].data
    assert published == {
        "publicationId": receipt.publication_id,
        "candidateId": receipt.candidate_id,
        "revision": 1,
        "deliveryOrdinal": 2,
        "outcome": "COMMITTED",
    }
    run.refresh_from_db()
    assert run.block_count == 2
    assert (receipt.revision, receipt.delivery_ordinal, receipt.body_digest) == (
        1,
        2,
        revision.body_digest,
    )


def test_a_failure_inside_the_commit_leaves_nothing_half_written(live_run, publish, settings):
    run = live_run()
    public = refs(run)[0][0]
    first = publish(run, "甲")
    before = snapshot(run)
    settings.SPARKTIDE_FAULT = "during_publication_commit"

    receipt = publish(
        run, f"乙 [[cite:{public.pk}]] [[block:{first.publication_id}]]", preview=False
    )

    assert (receipt.outcome, receipt.reason, receipt.saved) == (
        Outcome.REJECTED,
        "SAVE_FAILED",
        False,
    )
    assert snapshot(run) == before
    assert not BlockDependency.objects.filter(revision__block__run=run).exists()
    assert events(run, "answer.rejected")[-1].data["code"] == "SAVE_FAILED"


def test_a_preview_is_never_promoted_to_committed(live_run, publish, settings):
    from runtime.recovery import recover_run

    run = live_run()
    settings.SPARKTIDE_FAULT = "during_publication_commit"
    receipt = publish(run, "只预览过的段落")
    settings.SPARKTIDE_FAULT = ""

    assert receipt.outcome == Outcome.REJECTED
    assert not AnswerBlock.objects.filter(run=run).exists()
    assert RunReader(run).blocks() == []
    recovered = recover_run(run)
    assert recovered.status == Run.Status.FAILED
    attempt = PublicationAttempt.objects.get(candidate_id=receipt.candidate_id)
    assert attempt.outcome != Outcome.COMMITTED
    assert not BlockRevision.objects.filter(attempt=attempt).exists()


def test_a_commit_into_an_ended_run_is_refused(live_run, publish):
    run = live_run()
    Run.objects.filter(pk=run.pk).update(status=Run.Status.PARTIAL)

    receipt = publish(run, "迟到的段落")

    assert (receipt.outcome, receipt.reason) == (Outcome.REJECTED, "RUN_ENDED")
    assert not AnswerBlock.objects.filter(run=run).exists()


def test_a_block_reference_to_a_block_with_a_revoked_source_rejects_the_new_block(
    live_run, publish, alice, knowledge
):
    run = live_run()
    memo = refs(run)[1][0]
    x = publish(run, f"纪要 [[cite:{memo.pk}]]").publication_id
    remove_perm("knowledge.read_document", alice, knowledge.private_doc)

    receipt = publish(run, f"承接上文 [[block:{x}]]")

    assert (receipt.outcome, receipt.reason) == (Outcome.REJECTED, "DEPENDENCY_NOT_AUTHORIZED")


def test_an_unknown_block_reference_degrades_the_hint_and_makes_no_dependency(
    make_run, live_run, publish
):
    other = make_run({"answerPart": "别处"})
    foreign = AnswerBlock.objects.get(run=other).pk
    run = live_run()

    receipt = publish(run, f"参见 [[block:{foreign}]] 与 [[block:pub_nothing]]")

    assert (receipt.outcome, receipt.source_hint) == (Outcome.COMMITTED, "sources_unverified")
    assert not BlockDependency.objects.filter(revision__block__run=run).exists()


# --- cost: the query budgets live in tests/performance/test_query_budgets.py ------------


def test_a_preview_never_masks_a_committed_receipt_in_duplicate_detection(
    live_run, publish, settings
):
    """Seed 004 §六: only committed revisions are duplicates. A body that was only
    previewed (its save failed) is not "unchanged"; the committed one is."""
    run = live_run()
    public = refs(run)[0][0]
    committed_body = f"营收增长 [[cite:{public.pk}]]"
    block = publish(run, committed_body).publication_id
    settings.SPARKTIDE_FAULT = "during_publication_commit"
    publish(run, "只预览过的修订", replaces=block)
    settings.SPARKTIDE_FAULT = ""

    previewed_again = publish(run, "只预览过的修订", replaces=block)
    committed_again = publish(run, "只预览过的修订", replaces=block)

    assert (previewed_again.outcome, previewed_again.revision) == (Outcome.COMMITTED, 2)
    assert (committed_again.outcome, committed_again.revision) == (Outcome.UNCHANGED, 2)
    first = publish(run, committed_body)
    assert first.outcome == Outcome.COMMITTED  # rev 1 is no longer current: a new block
    assert first.publication_id != block


def test_an_unknown_fault_point_in_the_code_is_an_error():
    from foundation.faults import maybe_fault

    with pytest.raises(ValueError):
        maybe_fault("after_publication_comit")


# --- the preview's one statement before the append (docs/performance.md "Publication commit")


def _stored_before_the_commit(monkeypatch) -> list[str]:
    """The outcome stored for each candidate when its commit begins (after its preview)."""
    from publication import pipeline

    seen: list[str] = []
    commit = pipeline._commit

    def observed(candidate, target, digest, **options):
        seen.append(
            PublicationAttempt.objects.get(candidate_id=candidate.attempt.candidate_id).outcome
        )
        return commit(candidate, target, digest, **options)

    monkeypatch.setattr(pipeline, "_commit", observed)
    return seen


def test_a_same_body_with_another_proof_is_previewed_and_committed_as_a_new_block(
    live_run, publish, monkeypatch
):
    """The preview's attempt stands back when a current revision has the same body digest;
    the full duplicate check then finds another proof, so the candidate is previewed and
    committed like any other."""
    run = live_run()
    public = refs(run)[0][0]
    body = f"营收增长 [[cite:{public.pk}]]"
    first = publish(run, body)
    BlockRevision.objects.filter(block_id=first.publication_id).update(
        source_hint="sources_partial"
    )
    stored = _stored_before_the_commit(monkeypatch)

    again = publish(run, body)

    assert (again.outcome, again.body_digest) == (Outcome.COMMITTED, first.body_digest)
    assert again.publication_id != first.publication_id
    assert [e.data["candidateId"] for e in events(run, "answer.preview")][-1] == (
        again.candidate_id
    )
    assert stored == [Outcome.PREVIEWED]
    attempt = PublicationAttempt.objects.get(candidate_id=again.candidate_id)
    assert (attempt.outcome, attempt.block_id) == (Outcome.COMMITTED, again.publication_id)


def test_a_new_blocks_preview_stores_its_attempt_before_the_commit(live_run, publish, monkeypatch):
    run = live_run()
    stored = _stored_before_the_commit(monkeypatch)

    receipt = publish(run, "先预览，再保存。")

    assert receipt.outcome == Outcome.COMMITTED
    assert stored == [Outcome.PREVIEWED]
    preview = events(run, "answer.preview")[-1]
    assert preview.data == {"candidateId": receipt.candidate_id, "revision": 1}


def test_an_exact_duplicate_is_not_previewed_and_leaves_one_unchanged_attempt(live_run, publish):
    run = live_run()
    body = "营收增长，现金流充裕。"
    first = publish(run, body)
    previews = len(events(run, "answer.preview"))

    again = publish(run, body)

    assert (again.outcome, again.publication_id) == (Outcome.UNCHANGED, first.publication_id)
    assert len(events(run, "answer.preview")) == previews
    assert list(
        PublicationAttempt.objects.filter(candidate_id=again.candidate_id).values_list(
            "outcome", flat=True
        )
    ) == [Outcome.UNCHANGED]


def test_a_preview_refused_by_an_ended_run_leaves_one_rejected_attempt_and_no_event(
    live_run, publish
):
    """The preview's attempt is written before the append that refuses the ended run:
    it is rolled back with it, and the rejection is recorded once."""
    run = live_run()
    Run.objects.filter(pk=run.pk).update(status=Run.Status.CANCELLED)
    seq = Run.objects.get(pk=run.pk).last_seq
    previews = len(events(run, "answer.preview"))

    receipt = publish(run, "迟到的预览")

    assert (receipt.outcome, receipt.reason) == (Outcome.REJECTED, "RUN_ENDED")
    assert list(
        PublicationAttempt.objects.filter(candidate_id=receipt.candidate_id).values_list(
            "outcome", flat=True
        )
    ) == [Outcome.REJECTED]
    assert Run.objects.get(pk=run.pk).last_seq == seq
    assert len(events(run, "answer.preview")) == previews


@pytest.mark.parametrize("preview", [False, True], ids=["inserted", "previewed row updated"])
def test_the_one_write_stores_the_rows_the_orm_would(live_run, publish, preview):
    """The new block's statement is built from the models (no instances; after a preview
    only the attempt's changed columns are sent): every column holds what the ORM path
    stores for the same candidate."""
    run = live_run()
    public = refs(run)[0][0]
    body = f"营收增长 [[cite:{public.pk}]] [[cite:cite_forged]]"

    receipt = publish(run, body, preview=preview)

    revision = BlockRevision.objects.select_related("block", "attempt").get(
        block_id=receipt.publication_id
    )
    block, attempt = revision.block, revision.attempt
    assert (block.run_id, block.agent_call_id, block.origin) == (
        run.pk,
        run.agent_calls.get(depth=0).pk,
        "B",
    )
    assert (block.delivery_ordinal, block.current_revision) == (receipt.delivery_ordinal, 1)
    assert block.created_at == revision.committed_at
    assert (revision.revision, revision.role, revision.truncated) == (1, "answer", False)
    assert revision.content == {"type": "text", "text": body}
    assert (revision.body_digest, revision.source_hint) == (receipt.body_digest, "sources_partial")
    assert (attempt.candidate_id, attempt.outcome, attempt.effect) == (
        receipt.candidate_id,
        Outcome.COMMITTED,
        "create",
    )
    assert (attempt.block_id, attempt.revision, attempt.body_digest) == (
        block.pk,
        1,
        receipt.body_digest,
    )
    assert (attempt.content, attempt.source_hint) == (revision.content, "sources_partial")
    assert attempt.cited_ids == [public.pk, "cite_forged"]
    assert (attempt.entry, attempt.reason, attempt.replaces, attempt.quota_consumed) == (
        "B",
        "",
        "",
        False,
    )
    assert sorted(
        SourceBinding.objects.filter(revision=revision).values_list(
            "cited_id", "citation_id", "verified"
        )
    ) == sorted([(public.pk, public.pk, True), ("cite_forged", None, False)])


@pytest.mark.postgres(reason="the one write is PostgreSQL's; SQLite writes statement by statement")
def test_after_a_preview_the_commit_sends_only_the_attempts_changed_columns(live_run, publish):
    """The previewed row was written by this candidate a moment ago: the commit's one write
    sets what the commit changes (outcome, block, revision), not the body again."""
    import re

    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    run = live_run()
    with CaptureQueriesContext(connection) as log:
        receipt = publish(run, "先预览，再只改三列。")

    assert receipt.outcome == Outcome.COMMITTED
    # Bound on the server, a statement is logged as Django's "QUERY = … - PARAMS = …".
    (write,) = [q["sql"] for q in log.captured_queries if "WITH blk AS" in q["sql"]]
    update = re.search(r'UPDATE "publication_publicationattempt" SET (.*?) WHERE', write)
    assert update is not None
    assert re.findall(r'"(\w+)" = ', update.group(1)) == ["outcome", "block_id", "revision"]
