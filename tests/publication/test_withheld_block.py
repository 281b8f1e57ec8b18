"""A current source rejection beats the visibility of every older preview and receipt of
that block: withheld in every revision, on every path (REST events and answer, WebSocket
replay, the console)."""

import pytest
from guardian.shortcuts import remove_perm

from citations.models import CitationReference
from console.detail import run_detail
from publication.models import SourceHint
from publication.reader import PROTECTED, VISIBLE
from runs.models import RunEvent
from tests import factories
from tests.factories import client_for
from tests.publication.conftest import refs, reopen
from tests.realtime.helpers import read_page

pytestmark = pytest.mark.django_db


@pytest.fixture
def revised(live_run, publish, alice, knowledge):
    """Block A: revision 1 cites the public report, revision 2 alice's memo; then alice
    loses read access to the memo. Block B stands on the public report only."""
    run = live_run()
    public, memo = refs(run)
    a = publish(run, f"A 初稿：公开报告 [[cite:{public[0].pk}]]").publication_id
    publish(run, f"A 修订：内部纪要 [[cite:{memo[0].pk}]]", replaces=a)
    b = publish(run, f"B：公开报告 [[cite:{public[0].pk}]]").publication_id
    remove_perm("knowledge.read_document", alice, knowledge.private_doc)
    return run, a, b


def answer_events(events, block_id):
    return [
        e["data"]
        for e in events
        if e["type"] in ("answer.published", "answer.preview")
        and e["data"].get("publicationId") == block_id
    ]


def assert_withheld_everywhere(events, a, b):
    of_a = answer_events(events, a)
    assert [(e.get("revision"), e["state"]) for e in of_a] == [
        (1, PROTECTED),  # revision 1 cited only the public report: withheld all the same
        (2, PROTECTED),  # the preview of revision 2
        (2, PROTECTED),
    ]
    assert all("content" not in e for e in of_a)
    # The preview of A's first revision (a new block then: no publicationId) too.
    first_preview = next(e["data"] for e in events if e["type"] == "answer.preview")
    assert (first_preview["state"], "content" in first_preview) == (PROTECTED, False)
    assert {e["state"] for e in answer_events(events, b)} == {VISIBLE}
    assert "A 初稿" not in str(events)


def test_rest_event_replay_withholds_every_revision_of_a_block_withheld_now(revised, alice):
    run, a, b = revised
    body = client_for(alice).get(f"/v1/apps/business/runs/{run.pk}/events?limit=500").json()
    assert_withheld_everywhere(body["events"], a, b)


def test_websocket_replay_withholds_every_revision_of_a_block_withheld_now(revised):
    run, a, b = revised
    assert_withheld_everywhere(read_page(run, after=0, limit=500), a, b)


def test_the_answer_withholds_the_block_and_keeps_the_others(revised, alice):
    run, a, b = revised
    blocks = client_for(alice).get(f"/v1/apps/business/runs/{run.pk}/answer").json()["blocks"]
    assert {blk["id"]: blk["state"] for blk in blocks} == {a: PROTECTED, b: VISIBLE}


def test_the_console_shows_no_revision_of_a_block_withheld_now(revised):
    run, a, b = revised
    detail = run_detail(run)
    rows = {block.id: block.revisions for block in detail.blocks}
    assert [(r.revision, r.state, r.content) for r in rows[a]] == [
        (2, PROTECTED, None),
        (1, PROTECTED, None),
    ]
    assert [r.state for r in rows[b]] == [VISIBLE]
    assert_withheld_everywhere(detail.events, a, b)


def test_an_older_revision_stays_visible_while_the_current_one_stands(live_run, publish, alice):
    """The rule follows the block's current revision, not any older one."""
    run = live_run()
    public, memo = refs(run)
    a = publish(run, f"A 初稿 [[cite:{public[0].pk}]]").publication_id
    publish(run, f"A 修订 [[cite:{public[1].pk}]]", replaces=a)
    events = client_for(alice).get(f"/v1/apps/business/runs/{run.pk}/events?limit=500").json()
    assert {e["state"] for e in answer_events(events["events"], a)} == {VISIBLE}


def test_an_inherited_dependency_two_levels_deep_is_withheld_on_a_page_holding_only_the_deepest_block(
    live_run, publish, alice, knowledge
):
    run = live_run()
    memo = refs(run)[1][0]
    x = publish(run, f"X：纪要 [[cite:{memo.pk}]]").publication_id
    y = publish(run, f"Y：承接 [[block:{x}]]").publication_id
    z = publish(run, f"Z：再承接 [[block:{y}]]").publication_id
    remove_perm("knowledge.read_document", alice, knowledge.private_doc)
    z_event = RunEvent.objects.get(run=run, type="answer.published", data__publicationId=z)

    page = (
        client_for(alice)
        .get(f"/v1/apps/business/runs/{run.pk}/events?after={z_event.seq - 1}&limit=1")
        .json()["events"]
    )
    ws_page = read_page(run, after=z_event.seq - 1, limit=1)

    for events in (page, ws_page):
        assert [(e["type"], e["data"]["publicationId"]) for e in events] == [
            ("answer.published", z)
        ]
        assert events[0]["data"]["state"] == PROTECTED
        assert "content" not in events[0]["data"]


def test_a_root_block_citing_a_failed_sub_calls_reference_is_sources_unverified(
    app, alice, knowledge, publish
):
    helper = factories.make_agent(
        app.tenant,
        "helper",
        model=factories.scripted({"search": "毛利率"}, {"fail": "boom"}),
        knowledge=[knowledge],
        pin_to=[app],
    )
    run = factories.scripted_run(
        app,
        alice,
        [{"callAgent": "helper", "task": "查"}],
        knowledge=[knowledge],
        sub_agents=[helper.agent],
    )
    sub_ref = CitationReference.objects.filter(run=run, agent_call__depth=1).first()
    assert sub_ref is not None and run.agent_calls.get(depth=1).status == "FAILED"

    receipt = publish(reopen(run), f"根结论 [[cite:{sub_ref.pk}]]")

    assert receipt.saved
    assert receipt.source_hint == SourceHint.UNVERIFIED
