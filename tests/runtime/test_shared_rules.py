"""Rules the runtime shares with Publication and agents/ instead of keeping its own
copies: who settles a lost run's previews, what says a block was committed, which
pinned version a sub-agent may run, and that a pinned version cannot be retired."""

import pytest

from agents.models import AgentVersion
from agents.versions import PinnedVersionError, is_runnable, refuse_retiring_pinned
from publication import pipeline
from publication.models import PublicationAttempt
from publication.reader import committed_block_count
from runs.models import JournalEntry, Run
from runtime import recovery
from tests import factories

pytestmark = pytest.mark.django_db


def test_recovery_settles_lost_previews_through_publication(make_run, monkeypatch):
    """PublicationAttempt's outcome and the answer.rejected payload are Publication's:
    recovery hands the run to ``publication.pipeline.settle_lost_previews``."""
    run = make_run({"answerPart": "已提交"})
    attempt = PublicationAttempt.objects.get(run=run)
    PublicationAttempt.objects.create(
        candidate_id="cand_lostpreview0000000000000",
        run=run,
        agent_call=attempt.agent_call,
        entry="B",
        outcome=PublicationAttempt.Outcome.PREVIEWED,
        effect=attempt.effect,
    )
    Run.objects.filter(pk=run.pk).update(status=Run.Status.RUNNING)
    calls = []
    original = pipeline.settle_lost_previews
    monkeypatch.setattr(
        recovery,
        "settle_lost_previews",
        lambda r, reason: calls.append(reason) or original(r, reason),
    )

    recovered = recovery.recover_run(Run.objects.get(pk=run.pk))

    assert calls == ["WORKER_LOST"]
    assert (recovered.status, recovered.settled_previews, recovered.committed_blocks) == (
        "PARTIAL",
        1,
        1,
    )
    settled = PublicationAttempt.objects.get(candidate_id="cand_lostpreview0000000000000")
    assert (settled.outcome, settled.reason) == ("REJECTED", "WORKER_LOST")
    rejected = run.events.get(type="answer.rejected")
    assert rejected.data == {
        "candidateId": "cand_lostpreview0000000000000",
        "code": "WORKER_LOST",
        "effect": attempt.effect,
    }
    assert rejected.seq < run.events.get(type="run.partial").seq


def test_the_engine_and_recovery_read_committed_blocks_from_one_publication_read(make_run):
    committed = make_run(
        {"answerPart": "一"}, {"answerPart": "二"}, {"fail": "model down"}, key="committed"
    )
    nothing = make_run({"fail": "model down"}, key="nothing")
    assert committed_block_count(committed) == 2
    assert committed_block_count(nothing) == 0
    assert (committed.status, nothing.status) == ("PARTIAL", "FAILED")


def test_a_sub_agent_whose_pin_names_a_retired_version_is_not_run(make_run, app):
    """Before: call_agent ran whatever version the pin named; a root run refuses it."""
    helper = factories.make_agent(
        app.tenant, "helper", model=factories.scripted({"text": "子结论"}), pin_to=[app]
    )
    AgentVersion.objects.filter(pk=helper.pk).update(status=AgentVersion.Status.RETIRED)

    run = make_run({"callAgent": "helper", "task": "帮我查"}, sub_agents=[helper.agent])

    assert run.agent_calls.filter(depth=1).count() == 0
    receipt = JournalEntry.objects.get(run=run, kind="TOOL_RECEIPT", tool="call_agent").data
    assert receipt["receipt"] == {"error": "AGENT_NOT_AVAILABLE"}
    helper.refresh_from_db()
    assert not is_runnable(helper, agent_id=helper.agent_id, tenant_id=app.tenant_id)


def test_a_pinned_version_cannot_be_retired_and_an_unpinned_one_can(app):
    pinned = factories.make_agent(
        app.tenant, "researcher", model={"provider": "extractive"}, pin_to=[app]
    )
    with pytest.raises(PinnedVersionError) as refused:
        refuse_retiring_pinned(pinned)
    assert refused.value.apps == [app.slug]
    loose = factories.make_agent(app.tenant, "loose", model={"provider": "extractive"})
    refuse_retiring_pinned(loose)  # nothing pins it
