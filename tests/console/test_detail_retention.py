"""运行详情 answers a run past its app's retention window as the console's WebSocket does
(delivery/fanout.py ``access_run_for_watcher`` for a console admin): 410 EVENT_CURSOR_EXPIRED,
the rule being runs/retention.py's — and shows nothing of the run."""

from datetime import timedelta

import pytest
from django.utils import timezone

from delivery.fanout import access_run_for_watcher
from foundation.errors import ErrorCode, SparkTideError
from runs.models import Run

pytestmark = pytest.mark.django_db

QUESTION = "北辰医药营收如何？"


@pytest.fixture
def run(researcher, make_run):
    return make_run(input=QUESTION)


def _socket_refusal(run: Run, admin) -> SparkTideError | None:
    try:
        access_run_for_watcher(
            app_slug=run.app.slug, run_id=run.pk, ticket=None, session_user=admin
        )
    except SparkTideError as refused:
        return refused
    return None


def _age(run: Run, **delta) -> None:
    Run.objects.filter(pk=run.pk).update(created_at=timezone.now() - timedelta(**delta))


@pytest.mark.parametrize("how", ["past the window", "archived"])
def test_a_run_past_retention_is_410_on_the_page_as_on_the_socket(
    staff_client, admin_user, run, how
):
    if how == "archived":
        Run.objects.filter(pk=run.pk).update(archived_at=timezone.now())
    else:
        _age(run, days=run.app.retention_days, minutes=1)
    refused = _socket_refusal(run, admin_user)
    assert refused is not None and refused.code == ErrorCode.EVENT_CURSOR_EXPIRED

    response = staff_client.get(f"/console/runs/{run.pk}/")

    page = response.content.decode()
    assert response.status_code == refused.status == 410
    assert "EVENT_CURSOR_EXPIRED" in page and refused.detail in page
    assert QUESTION not in page and "营收同比增长" not in page
    assert "no-store" in response["Cache-Control"]


def test_a_run_just_inside_retention_is_shown_on_the_page_as_on_the_socket(
    staff_client, admin_user, run
):
    _age(run, days=run.app.retention_days, minutes=-5)
    assert _socket_refusal(run, admin_user) is None

    response = staff_client.get(f"/console/runs/{run.pk}/")

    assert response.status_code == 200
    assert QUESTION in response.content.decode()


def test_a_run_past_retention_is_not_re_run_its_question_is_gone_with_it(
    staff_client, admin_user, run, alice, app, knowledge
):
    """用其他版本重跑 would start a run with the expired run's question: refused with the
    socket's answer (problem+json 410 EVENT_CURSOR_EXPIRED), before its form is read."""
    from tests import factories
    from tests.console.conftest import ANSWER_STEPS

    factories.make_agent(
        app.tenant,
        "researcher",
        model=factories.scripted(*ANSWER_STEPS),
        knowledge=[knowledge],
        version="2",
    )
    _age(run, days=run.app.retention_days, minutes=1)
    refused = _socket_refusal(run, admin_user)
    assert refused is not None
    before = Run.objects.count()

    response = staff_client.post(
        f"/console/runs/{run.pk}/reruns", {"token": alice.raw_token, "version": "2"}
    )

    assert response.status_code == refused.status == 410
    assert response["Content-Type"] == "application/problem+json"
    assert response.json()["code"] == "EVENT_CURSOR_EXPIRED"
    assert response.json()["detail"] == refused.detail
    assert Run.objects.count() == before
