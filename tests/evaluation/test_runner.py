"""The runner on the demo: every question a real run (start_run, the engine), read back
through the history read and the citation preview's domain function; a wrong expectation
fails its question, a not-found answer with a VERIFIED citation fails not-found
correctness, a figure that is not in its excerpt fails figure precision, ``--fail-under``
exits non-zero, ``--agent`` runs a published version without touching the pin."""

import json
from decimal import Decimal
from io import StringIO

import pytest
from django.contrib.auth import get_user_model
from django.core.management import CommandError, call_command

from agents.models import AgentPin, AgentVersion
from evaluation.runner import (
    EvaluationError,
    evaluate,
    missed_thresholds,
    parse_threshold,
    resolve,
    summarize,
)
from evaluation.sets import load_set
from knowledge.models import KnowledgeVersion
from runs.models import Run
from tests import factories

pytestmark = pytest.mark.django_db(transaction=True)

REVENUE = "北辰医药三季度营业收入是多少？"
BEICHEN = "beichen-pharma-2026q3"


def run(path, app, *agents, username="analyst"):
    app, user, targets = resolve(app.slug, username, agents)
    lines: list[str] = []
    return [evaluate([load_set(path)], app=app, user=user, target=t, progress=lines.append)
            for t in targets], lines  # fmt: skip


def scripted_version(app, version: str, *steps: dict, status=AgentVersion.Status.PUBLISHED):
    """Another version of the pinned agent ``researcher`` (the pin stays on 1)."""
    knowledge = KnowledgeVersion.objects.get(knowledge__key="fund-reports", version="2026-Q3")
    made = factories.make_agent(
        app.tenant, "researcher", model=factories.scripted(*steps), knowledge=[knowledge],
        version=version,
    )  # fmt: skip
    if status != AgentVersion.Status.PUBLISHED:
        AgentVersion.objects.filter(pk=made.pk).update(status=status)
    return made


def test_a_right_expectation_passes_and_a_wrong_figure_fails_its_question(demo, write_set):
    path = write_set(
        {
            "name": "figures",
            "questions": [
                {"key": "right", "question": REVENUE, "expect": ["48.6"], "document": BEICHEN,
                 "page": 1},
                {"key": "wrong", "question": REVENUE, "expect": ["48.7"]},
                {"key": "wrong-page", "question": REVENUE, "document": BEICHEN, "page": 3},
            ],
        }
    )  # fmt: skip
    [evaluation], progress = run(path, demo)
    right, wrong, wrong_page = evaluation.results
    assert right.passed and right.checks == {
        "completed": True, "answered": True, "expect": True, "figures": True, "document": True,
        "page": True,
    }  # fmt: skip
    assert right.expect == [("48.6", True)]
    assert right.texts[0].startswith("**回答**") and "48.6" in right.texts[0]
    assert not wrong.passed and wrong.expect == [("48.7", False)]
    assert wrong.failed_checks == ["expect"]
    assert not wrong_page.passed and wrong_page.document_ok and wrong_page.page_ok is False
    # Each question is a real, completed run of the pinned version, as the user.
    runs = Run.objects.filter(pk__in=[r.run_id for r in evaluation.results])
    assert runs.count() == 3
    assert {(r.status, r.owner.username, r.agent_version.version) for r in runs} == {
        ("COMPLETED", "analyst", "1")
    }
    summary = summarize(evaluation.results)
    assert summary["fact_hit"] == {"ok": 1, "total": 2, "rate": 0.5}
    assert summary["page_accuracy"] == {"ok": 1, "total": 2, "rate": 0.5}
    assert summary["figure_precision"]["rate"] == 1.0 and summary["figure_precision"]["total"] > 3
    assert len(progress) == 3 and "FAIL" in progress[1] and "figures/wrong" in progress[1]


def test_a_follow_up_is_asked_in_its_conversation_and_only_there(demo, write_set):
    path = write_set(
        {
            "name": "conversation",
            "questions": [
                {"key": "first", "question": "星河医疗健康混合基金的股票仓位是多少？",
                 "sessionId": "desk", "expect": ["61.2"]},
                {"key": "then", "kind": "follow_up", "follows": "first",
                 "question": "那净值增长率呢？", "expect": ["7.85"]},
                {"key": "alone", "question": "那净值增长率呢？", "expect": ["7.85"]},
            ],
        }
    )  # fmt: skip
    [evaluation], _ = run(path, demo)
    first, then, alone = evaluation.results
    assert first.passed and then.passed, (then.texts, then.checks)
    assert not alone.passed  # asked on its own, it has no earlier entity
    sessions = dict(
        Run.objects.filter(pk__in=[first.run_id, then.run_id]).values_list("pk", "session_id")
    )
    assert sessions[first.run_id] == sessions[then.run_id] != "desk"  # unique per evaluation
    assert sessions[first.run_id].endswith(":desk")
    assert Run.objects.get(pk=alone.run_id).session_id == ""


def test_a_not_found_answer_with_a_verified_citation_fails_not_found_correctness(demo, write_set):
    scripted_version(
        demo, "claims-nothing",
        {"search": "北辰医药 营业收入", "topK": 1},
        {"answerPart": "未在可用的知识版本中找到北辰医药的董事长。 [[cite:{{c1}}]]"},
    )  # fmt: skip
    scripted_version(
        demo, "honest",
        {"search": "北辰医药 董事长", "topK": 1},
        {"answerPart": "未在可用的知识版本中找到北辰医药的董事长，无法给出有出处的回答。"},
    )  # fmt: skip
    path = write_set(
        {"name": "nf", "questions": [{"key": "chairman", "kind": "unanswerable",
                                       "question": "北辰医药董事长是谁？", "notFound": True}]}
    )  # fmt: skip
    [cited, honest], _ = run(path, demo, "researcher@claims-nothing", "researcher@honest")
    (result,) = cited.results
    assert result.answered_not_found and result.verified == 1 and result.references == 1
    assert result.checks["not_found"] is False and not result.passed
    assert summarize(cited.results)["not_found"] == {"ok": 0, "total": 1, "rate": 0.0}
    (clean,) = honest.results
    assert clean.answered_not_found and clean.verified == 0 and clean.issued == 1
    assert clean.passed and clean.unused == 1  # retrieved, never cited
    assert summarize(honest.results)["unused_retrieval"]["rate"] == 1.0


def test_a_figure_that_its_excerpt_does_not_state_fails_figure_precision(demo, write_set):
    scripted_version(
        demo, "misquotes",
        {"search": "北辰医药 营业收入 48.6 亿元", "topK": 1},
        {"answerPart": "北辰医药三季度营业收入 48.6 亿元 [[cite:{{c1}}]]，净利润 9.9 亿元 [[cite:{{c1}}]]"},
    )  # fmt: skip
    path = write_set({"name": "p", "questions": [{"key": "rev", "question": REVENUE,
                                                    "expect": ["48.6"]}]})  # fmt: skip
    [evaluation], _ = run(path, demo, "researcher@misquotes")
    (result,) = evaluation.results
    assert [(f.value, f.ok) for f in result.figures] == [("48.6", True), ("9.9", False)]
    assert result.checks["expect"] is True and result.checks["figures"] is False
    precision = summarize(evaluation.results)["figure_precision"]
    assert precision == {"ok": 1, "total": 2, "rate": 0.5}


def test_an_excerpt_the_user_may_not_read_is_not_read(demo, write_set):
    """The preview runs as the asking user: the intern cannot open the memo, so a figure
    cited to it cannot be confirmed (the runner never reads around the authorization)."""
    scripted_version(
        demo, "memo",
        {"search": "内部投研纪要 目标仓位 回撤复核线", "topK": 3},
        {"answerPart": "目标仓位上限 10% [[cite:{{c1}}]]"},
    )  # fmt: skip
    path = write_set({"name": "m", "questions": [{"key": "cap", "question": "目标仓位上限？",
                                                    "expect": ["10"]}]})  # fmt: skip
    [as_analyst], _ = run(path, demo, "researcher@memo")
    (analyst,) = as_analyst.results
    assert [(f.value, f.ok) for f in analyst.figures] == [("10", True)] and analyst.passed
    [as_intern], _ = run(path, demo, "researcher@memo", username="intern")
    # The intern's retrieval never issues the memo's excerpt: the public excerpt cited
    # instead does not state 10%, and the figure fails.
    (intern,) = as_intern.results
    assert [(f.value, f.ok) for f in intern.figures] == [("10", False)] and intern.verified == 1


def test_fail_under_exits_non_zero_naming_the_missed_measure(demo, write_set, tmp_path):
    path = write_set({"name": "gate", "questions": [{"key": "wrong", "question": REVENUE,
                                                       "expect": ["48.7"]}]})  # fmt: skip
    out = tmp_path / "result.json"
    with pytest.raises(CommandError) as caught:
        call_command(
            "evaluate", str(path), "--app", "research-desk", "--as", "analyst",
            "--fail-under", "fact_hit=90%", "--fail-under", "figure_precision=1",
            "--json", str(out), stdout=StringIO(), stderr=StringIO(),
        )  # fmt: skip
    assert caught.value.returncode == 1
    message = str(caught.value)
    assert "researcher@1: fact_hit: 0.0% (0/1) is under 90.0%" in message
    assert "figure_precision" not in message  # that one was met
    data = json.loads(out.read_text())
    (evaluation,) = data["evaluations"]
    assert evaluation["agent"] == "researcher@1"
    assert evaluation["total"]["fact_hit"]["rate"] == 0.0
    assert evaluation["questions"][0]["failedChecks"] == ["expect"]
    # Met thresholds: exit 0, the tables printed.
    stdout = StringIO()
    call_command(
        "evaluate", str(path), "--app", "research-desk", "--as", "analyst",
        "--fail-under", "figure_precision=1.0", stdout=stdout, stderr=StringIO(),
    )  # fmt: skip
    assert "| figure precision" in stdout.getvalue()


def test_threshold_parsing_and_an_empty_measure_misses_its_threshold():
    assert parse_threshold("fact_hit=0.9") == ("fact_hit", 0.9)
    assert parse_threshold("not_found=95%") == ("not_found", pytest.approx(0.95))
    for bad in ("fact_hit", "speed=1", "fact_hit=lots", "fact_hit=1.5"):
        with pytest.raises(EvaluationError, match="--fail-under"):
            parse_threshold(bad)
    summary = summarize([])
    assert missed_thresholds(summary, [("not_found", 0.5)]) == [
        "not_found: nothing measured (threshold 50.0%)"
    ]


def test_agent_runs_a_published_version_and_leaves_the_pin_alone(demo, write_set):
    scripted_version(
        demo, "2",
        # The search names the figure: the one excerpt that states it comes first whatever the
        # ranking does with the rest (the test is about versions and pins, not retrieval).
        {"search": "北辰医药 营业收入 48.6", "topK": 1},
        {"answerPart": "北辰医药三季度营业收入 48.6 亿元 [[cite:{{c1}}]]"},
    )  # fmt: skip
    pin = AgentPin.objects.get(app=demo, agent__key="researcher")
    path = write_set({"name": "a", "questions": [{"key": "rev", "question": REVENUE,
                                                    "expect": ["48.6"]},
                                                   {"key": "np", "question": "北辰医药三季度归母净利润是多少？",
                                                    "expect": ["6.2"]}]})  # fmt: skip
    stdout = StringIO()
    call_command(
        "evaluate", str(path), "--app", "research-desk", "--as", "analyst",
        "--agent", "researcher@1", "--agent", "researcher@2", stdout=stdout, stderr=StringIO(),
    )  # fmt: skip
    pin.refresh_from_db()
    assert pin.version.version == "1"
    versions = Counter_of(Run.objects.values_list("agent_version__version", flat=True))
    assert versions == {"1": 2, "2": 2}
    text = stdout.getvalue()
    assert "| measure" in text and "researcher@1" in text and "researcher@2" in text
    assert "newly passing under researcher@2 (0):" in text
    assert "newly failing under researcher@2 (1):" in text and "a/np" in text


def Counter_of(values) -> dict:
    out: dict = {}
    for v in values:
        out[v] = out.get(v, 0) + 1
    return out


@pytest.mark.parametrize(
    ("status", "message"),
    [(AgentVersion.Status.DRAFT, "the version is DRAFT"),
     (AgentVersion.Status.RETIRED, "the version is RETIRED")],
)  # fmt: skip
def test_agent_refuses_an_unpublished_version_before_anything_runs(
    demo, write_set, status, message
):
    scripted_version(demo, "9", {"answerPart": "x"}, status=status)
    path = write_set({"name": "a", "questions": [{"key": "rev", "question": REVENUE,
                                                    "expect": ["48.6"]}]})  # fmt: skip
    with pytest.raises(CommandError, match=f"--agent researcher@9: {message}; only a PUBLISHED"):
        call_command("evaluate", str(path), "--app", "research-desk", "--as", "analyst",
                     "--agent", "researcher@9", stdout=StringIO(), stderr=StringIO())  # fmt: skip
    assert not Run.objects.exists()


def test_the_user_agent_and_app_are_checked_before_anything_runs(demo, write_set):
    path = write_set({"name": "a", "questions": [{"key": "rev", "question": REVENUE,
                                                    "expect": ["48.6"]}]})  # fmt: skip
    outsider = get_user_model().objects.create_user("stranger")
    factories.make_user(factories.make_tenant("other"), "elsewhere")
    cases = [
        (["--as", "stranger"], "--as stranger: not an active member of research-desk"),
        (["--as", "elsewhere"], "--as elsewhere: not an active member of research-desk"),
        (["--as", "nobody"], "--as nobody: no such user"),
        (["--as", "analyst", "--agent", "researcher@7"], "researcher has no version '7'"),
        (["--as", "analyst", "--agent", "ghost"], "the agent 'ghost' is not pinned"),
        (["--as", "analyst", "--agent", "researcher@1", "--agent", "researcher@1"],
         "the same version twice"),
    ]  # fmt: skip
    for options, message in cases:
        with pytest.raises(CommandError, match=message.replace("?", r"\?")):
            call_command("evaluate", str(path), "--app", "research-desk", *options,
                         stdout=StringIO(), stderr=StringIO())  # fmt: skip
    with pytest.raises(CommandError, match="--app nowhere: no such app"):
        call_command("evaluate", str(path), "--app", "nowhere", "--as", "analyst",
                     stdout=StringIO(), stderr=StringIO())  # fmt: skip
    bad = write_set({"name": "b", "questions": [{"key": "x", "question": "y"}]}, "bad.yaml")
    with pytest.raises(CommandError, match=r"bad.yaml: questions\[0\]: says nothing to check"):
        call_command("evaluate", str(bad), "--app", "research-desk", "--as", "analyst",
                     stdout=StringIO(), stderr=StringIO())  # fmt: skip
    assert not Run.objects.exists() and outsider.pk


def test_sqlite_runs_questions_one_after_another_and_says_why(demo, write_set):
    from django.db import connection

    path = write_set({"name": "a", "questions": [{"key": "rev", "question": REVENUE,
                                                    "expect": ["48.6"]}]})  # fmt: skip
    stderr = StringIO()
    call_command("evaluate", str(path), "--app", "research-desk", "--as", "analyst",
                 "--jobs", "3", stdout=StringIO(), stderr=stderr)  # fmt: skip
    if connection.vendor == "sqlite":
        assert "SQLite has one writer" in stderr.getvalue()
    else:
        assert "SQLite" not in stderr.getvalue()
    assert "[   1/1] researcher@1 ok" in stderr.getvalue()


def test_decimal_figures_are_compared_as_decimals():
    from evaluation.checks import holds, is_not_found

    assert holds("研发费用率 16% [[cite:cite_x]]", "16.0")
    assert holds("营业收入 1,286.40 亿元", "1286.4") and not holds("61.25%", "61.2")
    assert holds("净值增长率为 -2.35%", "-2.35%") and not holds("[[cite:cite_48]]", "48")
    assert is_not_found([]) and is_not_found(["未在可用的知识版本中找到…"])
    assert not is_not_found(["**回答**：……", "未在可用的知识版本中找到"])
    assert Decimal("16.0") == Decimal("16")
