"""Rules of the reader that the rest of its tests left open (each found as a mutant of
publication/reader.py that survived them): a visible preview carries its body, and a
block committed while the reader reads does not hide the revisions of the others."""

import pytest
from django.db import connection

from publication.models import AnswerBlock, PublicationAttempt
from publication.reader import VISIBLE, RunReader
from runs.models import RunEvent

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

    def commit_a_block_after_the_blocks_are_listed(execute, sql, params, many, context):
        result = execute(sql, params, many, context)
        listing_blocks = sql.lstrip().upper().startswith("SELECT") and sql.split(" WHERE ")[
            0
        ].rstrip().endswith(f'FROM "{AnswerBlock._meta.db_table}"')
        if listing_blocks and not late:
            late.append("")
            late[0] = publish(run, "读取期间提交的新段落").publication_id
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
    from guardian.shortcuts import remove_perm

    from tests.publication.conftest import refs

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
