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
