"""Locking a run's row has one home (runs/events.py ``lock_run_row``): the claim, every fenced
write of the execution (citations, journal, heartbeat, Publication's commit), finishing and
cancelling a run take the lock through it, so the rule it carries (the epoch, the terminal
status) is decided in one place. A whole run, cancelled and finished, is watched statement by
statement: every row lock on the runs table is one of the home's statements."""

import re

import pytest
from django.db import connection

from runs.events import RunEnded, RunFenced, fence_statement, lock_run_row
from runs.lifecycle import cancel_run, finish_run
from runs.models import Run
from runs.reasons import RunReason
from runtime.engine import execute_run
from runtime.services import start_run
from tests import factories

pytestmark = pytest.mark.django_db(transaction=True)

# The home's statements, as sent (placeholders, not values): the plain columns of the row
# (``lock_run_row``), its fence inside a one-statement write (``fence_statement``), and the
# claim's read of the row with what the engine needs of it, locking only the run.
HOME = re.compile(r'SELECT ("[a-z_]+", )*"[a-z_]+" FROM "runs_run" WHERE "id" = %s FOR UPDATE')
CLAIM = re.compile(r'SELECT "runs_run"\."id", .* FOR UPDATE OF "runs_run"', re.S)


class RowLocks:
    """Every statement sent that locks a row of the runs table, as sent."""

    def __init__(self) -> None:
        self.sql: list[str] = []

    def __call__(self, execute, sql, params, many, context):
        if "FOR UPDATE" in sql and 'FROM "runs_run"' in sql:
            self.sql.append(sql)
        return execute(sql, params, many, context)

    def strays(self) -> list[str]:
        fence = f"WITH fence AS ({fence_statement()}) "
        return [
            sql
            for sql in self.sql
            if not (HOME.fullmatch(sql) or CLAIM.fullmatch(sql) or sql.startswith(fence))
        ]


@pytest.mark.postgres(reason="the row lock's text (FOR UPDATE) is PostgreSQL's")
def test_every_lock_of_a_run_row_in_a_whole_run_is_the_homes_statement(app, alice):
    knowledge = factories.fund_reports(app.tenant, app, alice)
    agent = factories.make_agent(
        app.tenant,
        "researcher",
        model=factories.scripted(
            {"search": "营收", "topK": 1}, {"answerPart": "营收增长 [[cite:{{c1}}]]"}
        ),
        knowledge=[knowledge],
        pin_to=[app],
    )
    queued = start_run(user=alice, app=app, agent_key=agent.agent.key, input="营收？")
    locks = RowLocks()
    with connection.execute_wrapper(locks):
        execute_run(queued.pk)
        cancelled = start_run(user=alice, app=app, agent_key=agent.agent.key, input="取消")
        cancel_run(cancelled)
        finish_run(Run.objects.get(pk=queued.pk), Run.Status.FAILED, RunReason.WORKER_LOST)
    assert Run.objects.get(pk=queued.pk).status == Run.Status.COMPLETED
    assert Run.objects.get(pk=cancelled.pk).status == Run.Status.CANCELLED
    assert len(locks.sql) >= 6, locks.sql  # claim, citations, journal, commit, 3 × finish
    assert locks.strays() == []
    assert sum(bool(CLAIM.fullmatch(sql)) for sql in locks.sql) == 1  # the claim, once


def test_the_home_refuses_a_lost_epoch_and_an_ended_run_as_the_fence_says(app, alice):
    run = factories.scripted_run(app, alice, [{"text": "好"}], execute=False)
    with pytest.raises(RunFenced):
        lock_run_row(run.pk, epoch=run.execution_epoch + 1)
    assert lock_run_row(run.pk, ("block_count",))["block_count"] == 0
    finish_run(run, Run.Status.FAILED, RunReason.WORKER_LOST)
    with pytest.raises(RunEnded) as ended:
        lock_run_row(run.pk, epoch=run.execution_epoch)
    assert not isinstance(ended.value, RunFenced)
    row = lock_run_row(run.pk, epoch=run.execution_epoch, ended_ok=True)
    assert row["status"] == Run.Status.FAILED
    with pytest.raises(Run.DoesNotExist):
        lock_run_row("run_missing")
