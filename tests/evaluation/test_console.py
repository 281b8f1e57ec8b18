"""The console's 评测 page on the demo: staff only; a shipped or uploaded set, run as the
member whose token is pasted (never as staff); bad input named before anything runs;
the detail page's summary and per-question rows link each run's 运行详情."""

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.test import Client

from evaluation.models import Evaluation
from evaluation.service import execute_evaluation
from runs.models import Run
from tests import factories

pytestmark = pytest.mark.django_db(transaction=True)

ANALYST = "st_demo_analyst_token_0001"
PAGE = "/console/apps/research-desk/evaluations/"


@pytest.fixture
def staff(admin_user) -> Client:
    c = Client()
    c.force_login(admin_user)
    return c


def test_the_page_is_staff_only(demo, client):
    response = client.get(PAGE)
    assert response.status_code == 302 and "/console/login/" in response["Location"]


def test_a_shipped_set_runs_as_the_token_owner_and_the_detail_links_each_run(demo, staff):
    page = staff.get(PAGE)
    assert page.status_code == 200
    html = page.content.decode()
    assert "desk.yaml" in html and "researcher@1" in html and "还没有评测" in html
    response = staff.post(PAGE, {"shipped": "desk.yaml", "first": "researcher@1", "token": ANALYST})
    assert response.status_code == 302, response.content.decode()[:2000]
    evaluation = Evaluation.objects.get()
    assert response["Location"] == f"/console/evaluations/{evaluation.pk}/"
    assert (evaluation.owner.username, evaluation.origin, evaluation.status) == (
        "analyst", "CONSOLE", "QUEUED"
    )  # fmt: skip
    assert evaluation.started_by.is_staff and evaluation.questions_total == 6
    queued = staff.get(response["Location"]).content.decode()
    assert 'http-equiv="refresh"' in queued and "0 / 6" in queued

    assert execute_evaluation(evaluation.pk) == "DONE"
    assert {r.owner.username for r in Run.objects.all()} == {"analyst"}
    done = staff.get(response["Location"]).content.decode()
    assert 'http-equiv="refresh"' not in done and "6 / 6" in done
    for run_id in Evaluation.objects.get().run_ids:
        assert f'href="/console/runs/{run_id}/"' in done
    assert 'data-measure="passed"' in done and "数字精确率" in done
    listed = staff.get(PAGE).content.decode()
    assert f'data-evaluation-id="{evaluation.pk}"' in listed and "已完成" in listed


def test_an_uploaded_set_with_a_bad_key_path_is_refused_before_anything_runs(demo, staff):
    text = "name: x\nquestions:\n  - {key: a, question: q, expect: ['1'], follows: a}\n"
    upload = SimpleUploadedFile("x.yaml", text.encode(), content_type="application/x-yaml")
    response = staff.post(PAGE, {"set_file": upload, "first": "researcher@1", "token": ANALYST})
    assert response.status_code == 400
    assert "x.yaml: questions[0].follows" in response.content.decode()
    assert not Evaluation.objects.exists() and not Run.objects.exists()


def test_a_token_of_a_non_member_or_none_at_all_is_refused(demo, staff):
    stranger = factories.make_user(factories.make_tenant("globex"), "mallory")
    response = staff.post(
        PAGE, {"shipped": "desk.yaml", "first": "researcher@1", "token": stranger.raw_token}
    )
    assert response.status_code == 400
    assert "令牌的所有者不是此应用的有效成员" in response.content.decode()
    forged = staff.post(PAGE, {"shipped": "desk.yaml", "first": "researcher@1", "token": "st_x"})
    assert forged.status_code == 400 and "令牌无效或已撤销" in forged.content.decode()
    neither = staff.post(PAGE, {"first": "researcher@1", "token": ANALYST})
    assert "二选一" in neither.content.decode()
    assert not Evaluation.objects.exists() and not Run.objects.exists()
