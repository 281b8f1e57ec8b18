"""Conversation history follows the retention rule (runs/retention.py): an earlier run of the
session past its app's retention window is gone for the history as it is for its events and
answer — not only an archived one."""

from datetime import timedelta

import pytest
from django.utils import timezone

from runs.models import Run
from runs.retention import is_expired
from runtime.conversation import conversation_history
from tests import factories

pytestmark = pytest.mark.django_db(transaction=True)


def _answered(app, owner, knowledge, question, *, key):
    run = factories.scripted_run(
        app,
        owner,
        [{"search": "营收", "topK": 1}, {"answerPart": f"答：{question}"}],
        knowledge=[knowledge],
        key=key,
        session_id="s",
    )
    run.input = question
    run.save(update_fields=["input"])
    return run


@pytest.fixture
def knowledge(tenant, app, alice):
    return factories.fund_reports(tenant, app, alice)


def test_an_earlier_run_past_the_retention_window_is_not_in_the_history(app, alice, knowledge):
    old = _answered(app, alice, knowledge, "很久以前", key="old")
    kept = _answered(app, alice, knowledge, "昨天", key="kept")
    current = _answered(app, alice, knowledge, "现在", key="now")
    now = timezone.now()
    # Past the window by a minute, not archived yet (the archiver has not come by).
    Run.objects.filter(pk=old.pk).update(
        created_at=now - timedelta(days=app.retention_days, minutes=1)
    )
    Run.objects.filter(pk=kept.pk).update(
        created_at=now - timedelta(days=app.retention_days, minutes=-5)
    )
    old.refresh_from_db()
    kept.refresh_from_db()
    assert old.archived_at is None and is_expired(old) and not is_expired(kept)

    history = conversation_history(current)

    assert [turn["question"] for turn in history] == ["昨天"]
    assert history[0]["answer"].startswith("答：昨天")


def test_an_archived_earlier_run_is_still_left_out(app, alice, knowledge):
    archived = _answered(app, alice, knowledge, "已归档", key="archived")
    current = _answered(app, alice, knowledge, "现在", key="now")
    Run.objects.filter(pk=archived.pk).update(archived_at=timezone.now())
    assert conversation_history(current) == []
