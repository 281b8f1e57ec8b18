"""The scripted and extractive providers, driven by the real engine."""

import pytest

from agents.providers import validate_model_config
from citations.models import CitationReference
from publication.models import AnswerBlock, BlockRevision
from publication.reader import RunReader
from runs.models import JournalEntry, Run
from tests import factories

pytestmark = pytest.mark.django_db(transaction=True)


def test_search_step_issues_citations_with_the_requested_top_k(make_run):
    run = make_run({"search": "营收", "topK": 1})
    refs = CitationReference.objects.filter(run=run)
    assert refs.count() == 1
    assert (refs.get().query, refs.get().top_k) == ("营收", 1)


def test_text_step_is_published_through_entry_a(make_run):
    run = make_run({"text": "直接回答"})
    block = AnswerBlock.objects.get(run=run)
    assert (block.origin, RunReader(run).blocks()[0].content) == (
        "A",
        {"type": "text", "text": "直接回答"},
    )


def test_answer_part_step_with_replaces_revises_the_block(make_run):
    run = make_run({"answerPart": "初稿"}, {"answerPart": "定稿", "replaces": "{{p1}}"})
    (view,) = RunReader(run).blocks()
    assert (view.revision, view.content["text"], view.origin) == (2, "定稿", "B")


def test_call_agent_step_runs_the_sub_agent_and_returns_its_text(make_run, app, knowledge):
    helper = factories.make_agent(
        app.tenant, "helper", model=factories.scripted({"text": "子结论"}), pin_to=[app]
    )
    run = make_run({"callAgent": "helper", "task": "帮我查"}, sub_agents=[helper.agent])
    sub = run.agent_calls.get(depth=1)
    assert (sub.task, sub.result_text, sub.parent.depth) == ("帮我查", "子结论", 0)
    receipt = JournalEntry.objects.get(run=run, kind="TOOL_RECEIPT", tool="call_agent").data[
        "receipt"
    ]
    assert receipt == {"agentCallId": sub.public_id}
    assert not AnswerBlock.objects.filter(
        run=run
    ).exists()  # a sub-agent answers its caller, never the run


def test_call_agent_to_an_agent_not_allowed_is_refused(make_run, app):
    factories.make_agent(app.tenant, "other", model=factories.scripted({"text": "x"}), pin_to=[app])
    run = make_run({"callAgent": "other", "task": "t"})
    assert run.agent_calls.count() == 1
    receipt = JournalEntry.objects.get(run=run, kind="TOOL_RECEIPT", tool="call_agent").data[
        "receipt"
    ]
    assert receipt == {"error": "AGENT_NOT_ALLOWED"}


def test_fail_step_stops_the_script(make_run):
    run = make_run({"fail": "坏了"}, {"text": "never"})
    assert (run.status, run.reason, run.reason_detail) == ("FAILED", "PROVIDER_FAILED", "坏了")
    assert not AnswerBlock.objects.filter(run=run).exists()


def test_sleep_step_waits(make_run):
    run = make_run({"sleep": 0.3}, {"text": "after"})
    assert (run.completed_at - run.started_at).total_seconds() >= 0.3


def test_placeholders_name_issued_ids_and_unknown_ones_stay_literal(make_run):
    run = make_run(
        {"search": "营收增长"},
        {"answerPart": "c={{c1}} n={{n1}}"},
        {"answerPart": "p={{p1}} c9={{c9}}"},
    )
    texts = [v.content["text"] for v in RunReader(run).blocks()]
    cite = CitationReference.objects.filter(run=run).order_by("ordinal").first().pk
    handle = run.numeric_handles.first().pk
    block = AnswerBlock.objects.get(run=run, delivery_ordinal=1).pk
    assert texts == [f"c={cite} n={handle}", f"p={block} c9={{{{c9}}}}"]


@pytest.mark.parametrize(
    ("config", "message"),
    [
        ({"provider": "scripted", "steps": []}, "non-empty"),
        ({"provider": "scripted", "steps": [{"text": "a", "search": "b"}]}, "exactly one"),
        ({"provider": "scripted", "steps": [{"search": "a", "topK": 99}]}, "topK"),
        ({"provider": "scripted", "steps": [{"text": "a", "bogus": 1}]}, "unknown key"),
        ({"provider": "scripted", "steps": [{"sleep": 31}]}, "sleep"),
        ({"provider": "scripted", "steps": [{"sleep": 600}]}, "sleep"),
        ({"provider": "gpt"}, "provider must be one of"),
    ],
)
def test_invalid_model_configs_are_refused_with_a_reason(config, message):
    with pytest.raises(ValueError, match=message):
        validate_model_config(config)


def extractive_run(app, owner, knowledge, question: str) -> Run:
    """A real run of an extractive agent over ``knowledge``."""
    from runtime.engine import execute_run
    from runtime.services import start_run

    factories.make_agent(
        app.tenant,
        "extractive",
        model={"provider": "extractive"},
        knowledge=[knowledge],
        pin_to=[app],
    )
    run = start_run(user=owner, app=app, agent_key="extractive", input=question)
    execute_run(run.pk)
    run.refresh_from_db()
    return run


def test_the_extractive_provider_publishes_a_progressive_cited_answer(app, alice, tenant):
    from decimal import Decimal

    from knowledge.ingest import FactInput

    growth = FactInput(key="revenue_growth", value=Decimal("12.0"), unit="%", label="营收增长")
    version = factories.fund_reports(tenant, app, alice, facts=[growth])
    run = extractive_run(app, alice, version, "北辰医药营收增长")
    assert run.status == Run.Status.COMPLETED
    views = RunReader(run).blocks()
    assert len(views) >= 2
    assert BlockRevision.objects.filter(
        block__run=run, revision=2
    ).exists()  # the direct answer is revised into the named figure
    assert all(v.source_hint == "verified" for v in views)
    assert any(
        "12%" in v.content["text"] for v in views
    )  # the declared fact, rendered from its handle
    statuses = {r["status"] for r in run.events.get(type="citation.verified").data["references"]}
    assert statuses == {"VERIFIED"}


def test_the_extractive_provider_says_so_when_nothing_is_found(app, alice, knowledge):
    run = extractive_run(app, alice, knowledge, "zzzz qqqq")
    (view,) = RunReader(run).blocks()
    assert "未在可用的知识版本中找到" in view.content["text"]
    assert view.source_hint == "none"


def test_the_extractive_provider_names_figures_by_their_label(app, alice, tenant):
    from decimal import Decimal

    from knowledge.ingest import FactInput

    growth = FactInput(
        key="revenue_growth_yoy", value=Decimal("18.4"), unit="%", label="营业收入同比增长"
    )
    pages = ["北辰医药三季度营业收入同比增长 18.4%，主要来自创新药销售。"]
    version = factories.fund_reports(tenant, app, alice, pages=pages, facts=[growth])
    run = extractive_run(app, alice, version, "北辰医药营收增长")
    texts = "\n".join(v.content["text"] for v in RunReader(run).blocks())
    assert "营业收入同比增长：18.4%" in texts
    assert "revenue_growth_yoy" not in texts
