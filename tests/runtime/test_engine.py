"""The run engine end to end, with the scripted provider and real retrieval."""

import pytest

from citations.models import CitationReference
from publication.models import AnswerBlock
from runs.models import Run

pytestmark = pytest.mark.django_db(transaction=True)


def event_types(run):
    return list(run.events.order_by("seq").values_list("type", flat=True))


def test_a_full_run_emits_its_events_in_order(make_run):
    run = make_run({"search": "营收", "topK": 2}, {"answerPart": "营收增长 12% [[cite:{{c1}}]]"})
    assert run.status == Run.Status.COMPLETED
    assert event_types(run) == [
        "run.started",
        "agent.started",
        "citation.created",
        "citation.created",
        "answer.preview",
        "answer.published",
        "agent.completed",
        "citation.verified",
        "run.completed",
    ]
    seqs = list(run.events.order_by("seq").values_list("seq", flat=True))
    assert seqs == list(range(1, len(seqs) + 1))


def test_own_citations_are_verified_and_forged_ones_are_not(make_run):
    run = make_run(
        {"search": "营收"},
        {
            "answerPart": "真 [[cite:{{c1}}]] 伪 [[cite:cite_forgedforgedforgedforged0]] 空 [[cite:]] 截 [[cite:cite_ab]]"
        },
    )
    verified = run.events.get(type="citation.verified").data
    statuses = {ref["id"]: ref["status"] for ref in verified["references"]}
    own = CitationReference.objects.filter(run=run).order_by("ordinal").first().pk
    assert statuses == {
        own: "VERIFIED",
        "cite_forgedforgedforgedforged0": "UNVERIFIED",
        "": "UNVERIFIED",
        "cite_ab": "UNVERIFIED",
    }


def test_another_runs_citation_is_unverified(make_run):
    first = make_run({"search": "营收"}, {"text": "ok"}, key="first")
    foreign = CitationReference.objects.filter(run=first).first().pk
    second = make_run({"search": "现金流"}, {"text": f"借用 [[cite:{foreign}]]"}, key="second")
    refs = second.events.get(type="citation.verified").data["references"]
    assert refs == [{"id": foreign, "status": "UNVERIFIED"}]


def test_sub_call_citations_are_verified_for_the_caller(make_run, app, knowledge):
    from tests import factories

    helper = factories.make_agent(
        app.tenant,
        "helper",
        model=factories.scripted({"search": "毛利率"}, {"text": "毛利率稳定 [[cite:{{c1}}]]"}),
        knowledge=[knowledge],
        pin_to=[app],
    )
    run = make_run(
        {"callAgent": "helper", "task": "查毛利率"},
        {"answerPart": "结论 [[cite:{{c1}}]]"},
        sub_agents=[helper.agent],
    )
    refs = run.events.get(type="citation.verified").data["references"]
    assert [r["status"] for r in refs] == ["VERIFIED"]
    assert CitationReference.objects.get(pk=refs[0]["id"]).agent_call.depth == 1


def test_a_failed_sub_calls_citations_are_not_the_callers_evidence(make_run, app, knowledge):
    from publication.verification import verify_answer
    from tests import factories

    helper = factories.make_agent(
        app.tenant,
        "helper",
        model=factories.scripted({"search": "毛利率"}, {"fail": "boom"}),
        knowledge=[knowledge],
        pin_to=[app],
    )
    run = make_run(
        {"callAgent": "helper", "task": "查"}, {"text": "无引用"}, sub_agents=[helper.agent]
    )
    sub_ref = CitationReference.objects.get(run=run, agent_call__depth=1)
    root = run.agent_calls.get(depth=0)
    block = AnswerBlock.objects.get(run=run)
    block.revisions.update(content={"type": "text", "text": f"[[cite:{sub_ref.pk}]]"})
    assert verify_answer(run, root)["references"] == [{"id": sub_ref.pk, "status": "UNVERIFIED"}]


def test_a_provider_failure_after_a_committed_part_ends_partial_with_the_part_intact(
    make_run, alice
):
    from publication.reader import RunReader

    run = make_run({"answerPart": "第一部分"}, {"fail": "model crashed"})
    assert run.status == Run.Status.PARTIAL
    assert run.reason == "PROVIDER_FAILED"
    assert [b.content for b in RunReader(run).blocks()] == [{"type": "text", "text": "第一部分"}]
    assert event_types(run)[-1] == "run.partial"


def test_a_provider_failure_before_any_commit_ends_failed(make_run):
    run = make_run({"fail": "no"})
    assert run.status == Run.Status.FAILED
    assert run.events.last().data == {"status": "FAILED", "reason": "PROVIDER_FAILED"}


def test_the_step_limit_ends_the_run(make_run):
    run = make_run({"text": "一"}, {"text": "二"}, {"text": "三"}, max_steps=2)
    assert run.status == Run.Status.PARTIAL
    assert run.reason == "STEP_LIMIT_REACHED"


def test_a_queued_run_cancelled_never_starts(make_run):
    from runs.lifecycle import cancel_run
    from runtime.engine import execute_run

    run = make_run({"text": "hi"}, execute=False)
    cancel_run(run)
    assert execute_run(run.pk) is None
    run.refresh_from_db()
    assert run.status == Run.Status.CANCELLED
    assert event_types(run) == ["run.cancelled"]


def test_document_acl_filters_retrieval(make_run, bob):
    run = make_run({"search": "内部投研纪要 营收预测", "topK": 5}, {"text": "x"}, owner=bob)
    titles = set(CitationReference.objects.filter(run=run).values_list("title", flat=True))
    assert "内部投研纪要" not in titles
    assert titles


def test_numeric_handles_render_values_and_bad_handles_say_unavailable(make_run):
    from publication.reader import RunReader

    run = make_run(
        {"search": "营收增长"}, {"answerPart": "增长 [[num:{{n1}}]]，另 [[num:num_bogus]]"}
    )
    text = RunReader(run).blocks()[0].content["text"]
    assert text == "增长 12%，另 〔数值不可用〕"


@pytest.mark.timing
def test_an_engine_whose_run_was_ended_elsewhere_stops_at_its_next_step(make_run):
    """Recovery may end a run whose worker looked dead; if that worker was only
    slow, it must stop at its next step instead of writing after the end."""
    import threading
    import time

    from django.db import connections

    from runs.events import RunFenced
    from runtime.engine import execute_run
    from runtime.recovery import recover_run

    # (the worker's step lasts long enough for recovery to land inside it on a loaded
    # machine: at 0.5 s a starved main thread could recover only after the step)
    run = make_run({"sleep": 2.0}, {"text": "too late"}, execute=False)
    outcome = {}

    def work():
        try:
            outcome["status"] = execute_run(run.pk)
        except RunFenced as exc:  # the worker learns its execution was taken over
            outcome["fenced"] = (exc.epoch, exc.current, exc.status)
        finally:
            connections.close_all()

    worker = threading.Thread(target=work)
    worker.start()
    for _ in range(50):
        run.refresh_from_db()
        if run.status == Run.Status.RUNNING:
            break
        time.sleep(0.05)
    recover_run(run)
    worker.join(10)
    connections.close_all()
    run.refresh_from_db()
    assert (run.status, run.reason, outcome) == (
        "FAILED",
        "WORKER_LOST",
        {"fenced": (1, 2, "FAILED")},
    )
    assert event_types(run)[-1] == "run.failed"
    assert not AnswerBlock.objects.filter(run=run).exists()
