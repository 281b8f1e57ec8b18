"""Evaluations over REST on the demo: created at once and queued, executed by the
background task as the caller (normal runs), read back by their owner only; every bad
input a documented problem naming the item before any run starts; the pin never moves."""

import pytest
from django.tasks import TaskResultStatus
from django_tasks_db.models import DBTaskResult
from rest_framework.test import APIClient

from agents.models import AgentPin, AgentVersion
from evaluation.models import Evaluation
from evaluation.service import execute_evaluation
from runs.models import Run
from tests import factories
from tests.evaluation.test_runner import REVENUE, scripted_version

pytestmark = pytest.mark.django_db(transaction=True)

ANALYST = "st_demo_analyst_token_0001"
INTERN = "st_demo_intern_token_0002"
TASK_PATH = "evaluation.tasks.execute_evaluation_task"
SET = {
    "name": "desk",
    "questions": [
        {
            "key": "rev",
            "question": REVENUE,
            "expect": ["48.6"],
            "document": "beichen-pharma-2026q3",
        },
        {"key": "wrong", "question": REVENUE, "expect": ["48.7"]},
    ],
}


def client(token: str) -> APIClient:
    c = APIClient()
    c.credentials(HTTP_AUTHORIZATION=f"Bearer {token}")
    return c


def create(token: str, body: dict, app: str = "research-desk"):
    return client(token).post(f"/v1/apps/{app}/evaluations", body, format="json")


def problem(response, status: int, code: str) -> str:
    assert response.status_code == status, response.content
    assert response["Content-Type"].startswith("application/problem+json")
    assert response.json()["code"] == code
    return response.json()["detail"]


def test_the_owner_creates_an_evaluation_that_the_background_task_executes(demo):
    response = create(ANALYST, {"set": SET})
    assert response.status_code == 202, response.content
    body = response.json()
    assert body["status"] == "QUEUED" and body["agents"] == ["researcher@1"]
    assert body["progress"] == {"done": 0, "total": 2} and body["set"]["name"] == "desk"
    assert len(body["set"]["digest"]) == 64
    assert not Run.objects.exists()  # answered at once: nothing ran yet
    task = DBTaskResult.objects.get(task_path=TASK_PATH)
    assert task.status == TaskResultStatus.READY and task.args_kwargs["args"] == [body["id"]]

    assert execute_evaluation(body["id"]) == "DONE"
    assert execute_evaluation(body["id"]) is None  # a second delivery does nothing

    done = client(ANALYST).get(f"/v1/apps/research-desk/evaluations/{body['id']}")
    assert done.status_code == 200 and done["Cache-Control"] == "no-store"
    data = done.json()
    assert data["status"] == "DONE" and data["progress"] == {"done": 2, "total": 2}
    summary = data["summaries"]["researcher@1"]
    assert summary["passed"] == {"ok": 1, "total": 2, "rate": 0.5}
    assert summary["document_accuracy"] == {"ok": 1, "total": 1, "rate": 1.0}
    rev, wrong = data["questions"]
    assert (rev["key"], rev["passed"], wrong["key"], wrong["failedChecks"]) == (
        "rev", True, "wrong", ["expect"]
    )  # fmt: skip
    assert "48.6" in rev["firstBlock"]
    runs = Run.objects.filter(pk__in=[rev["runId"], wrong["runId"]])
    assert {(r.owner.username, r.status) for r in runs} == {("analyst", "COMPLETED")}
    kept = Evaluation.objects.get()
    assert kept.run_ids == [rev["runId"], wrong["runId"]]
    assert kept.started_by.username == "analyst" and kept.origin == "API"


def test_another_member_another_tenant_and_an_unknown_id_get_the_same_404(demo):
    evaluation_id = create(ANALYST, {"set": SET}).json()["id"]
    other = factories.make_user(factories.make_tenant("globex"), "mallory")
    answers = [
        client(INTERN).get(f"/v1/apps/research-desk/evaluations/{evaluation_id}"),
        client(other.raw_token).get(f"/v1/apps/research-desk/evaluations/{evaluation_id}"),
        client(ANALYST).get("/v1/apps/research-desk/evaluations/eval_doesnotexist"),
    ]
    bodies = [a.content for a in answers]
    assert [a.status_code for a in answers] == [404, 404, 404]
    assert bodies[0] == bodies[1] == bodies[2]
    assert answers[0].json()["code"] == "RESOURCE_NOT_FOUND"
    assert evaluation_id.encode() not in bodies[0]
    # A non-member cannot start one either: the app answers as missing.
    problem(create(other.raw_token, {"set": SET}), 404, "RESOURCE_NOT_FOUND")


def _questions(n: int) -> list[dict]:
    return [{"key": f"q{i}", "question": "营收？", "expect": ["1"]} for i in range(n)]


@pytest.mark.parametrize(
    "questions, detail",
    [
        (_questions(10_000), "set: questions: holds 10,000 questions; a set holds at most 5,000"),
        (
            [{"key": "long", "question": "营" * 100_000, "expect": ["1"]}],
            "set: questions[0].question: 100,000 characters; a run's input holds at most 32,000",
        ),
        (
            [*_questions(2), {"key": "q1", "question": "营收？", "expect": ["1"]}],
            "set: questions[2].key: duplicated key 'q1' (also questions[1].key)",
        ),
        (
            [
                {"key": "a", "question": "x", "expect": ["1"], "follows": "b"},
                {"key": "b", "question": "y", "expect": ["1"], "follows": "a"},
            ],
            "set: questions[0].follows: the follows-chain loops: a → b → a",
        ),
        (
            [{"key": "a", "question": "x", "expect": [True]}],
            "set: questions[0].expect[0]: must be a string or a figure, got a boolean",
        ),
    ],
    ids=["10000-questions", "100k-characters", "duplicated-key", "follows-loop", "bad-type"],
)
def test_a_bad_set_is_refused_naming_its_key_path_before_anything_runs(demo, questions, detail):
    detail_got = problem(
        create(ANALYST, {"set": {"name": "bad", "questions": questions}}), 400, "INVALID_REQUEST"
    )
    assert detail_got == detail
    assert not Evaluation.objects.exists() and not Run.objects.exists()
    assert not DBTaskResult.objects.filter(task_path=TASK_PATH).exists()


def test_a_set_given_as_file_text_refuses_a_duplicated_mapping_key(demo):
    text = "name: a\nname: b\nquestions:\n  - {key: q, question: x, expect: ['1']}\n"
    detail = problem(create(ANALYST, {"set": text}), 400, "INVALID_REQUEST")
    assert "duplicate" in detail and "'name'" in detail
    ok = create(
        ANALYST, {"set": "name: a\nquestions:\n  - {key: q, question: x, notFound: true}\n"}
    )
    assert ok.status_code == 202, ok.content


@pytest.mark.parametrize(
    "status, agents, detail",
    [
        (None, ["researcher@7"], "agents[0]: researcher has no version '7'"),
        ("RETIRED", ["researcher@9"], "agents[0]: the version is RETIRED; only a PUBLISHED"),
        ("DRAFT", ["researcher@1", "researcher@9"], "agents[1]: the version is DRAFT"),
        (None, ["ghost"], "agents[0]: the agent 'ghost' is not pinned in research-desk"),
    ],
)
def test_an_unknown_or_unpublished_version_is_a_422_naming_the_item(demo, status, agents, detail):
    if status:
        scripted_version(demo, "9", {"answerPart": "x"}, status=status)
    got = problem(create(ANALYST, {"set": SET, "agents": agents}), 422, "AGENT_NOT_AVAILABLE")
    assert got.startswith(detail)
    assert not Evaluation.objects.exists() and not Run.objects.exists()


def test_unknown_fields_and_three_versions_are_refused(demo):
    detail = problem(create(ANALYST, {"set": SET, "version": "2"}), 400, "INVALID_REQUEST")
    assert "version" in detail
    three = ["researcher@1", "researcher@2", "researcher@3"]
    problem(create(ANALYST, {"set": SET, "agents": three}), 400, "INVALID_REQUEST")


def test_evaluating_a_version_the_app_does_not_pin_leaves_the_pin_alone(demo):
    scripted_version(
        demo, "2",
        {"search": "北辰医药 营业收入", "topK": 1},
        {"answerPart": "北辰医药三季度营业收入 48.6 亿元 [[cite:{{c1}}]]"},
    )  # fmt: skip
    pin = AgentPin.objects.get(app=demo, agent__key="researcher")
    body = create(ANALYST, {"set": SET, "agents": ["researcher@1", "researcher@2"]}).json()
    assert execute_evaluation(body["id"]) == "DONE"
    pin.refresh_from_db()
    assert pin.version.version == "1"
    kept = Evaluation.objects.get()
    assert set(kept.summaries) == {"researcher@1", "researcher@2"}
    versions = sorted(Run.objects.values_list("agent_version__version", flat=True))
    assert versions == ["1", "1", "2", "2"]


def test_a_version_retired_after_queueing_fails_the_evaluation_before_any_run(demo):
    scripted_version(demo, "2", {"answerPart": "x"})
    body = create(ANALYST, {"set": SET, "agents": ["researcher@2"]}).json()
    AgentVersion.objects.filter(agent__key="researcher", version="2").update(status="RETIRED")
    assert execute_evaluation(body["id"]) == "FAILED"
    kept = Evaluation.objects.get()
    assert kept.error.startswith("agents[0]: the version is RETIRED") and kept.finished_at
    assert not Run.objects.exists()
