"""Cancel and claim race for a QUEUED run: exactly one of them wins, decided under the run's lock."""

import threading

import pytest
from django.db import close_old_connections, connection

from runs.lifecycle import cancel_run, claim_run
from runs.models import Run

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.mark.timing
def test_a_run_claimed_while_it_is_being_cancelled_is_never_ended_cancelled_under_its_worker(
    make_run,
):
    """A worker claims the run right after the cancel looked at it. Either the claim waits for
    the cancel's lock and then finds the run ended, or the cancel leaves the claimed run to its
    worker — never a CANCELLED run whose worker goes on running it."""
    run = make_run({"text": "x"}, execute=False)
    claimed: list[Run | None] = []
    worker = threading.Thread(
        target=lambda: (claimed.append(claim_run(run.pk)), close_old_connections())
    )
    seen = {"update": False, "started": False}

    def claim_after_the_cancel_reads_the_run(execute, sql, params, many, context):
        result = execute(sql, params, many, context)
        if sql.lstrip().upper().startswith("UPDATE") and "cancel_requested_at" in sql:
            seen["update"] = True
        elif seen["update"] and not seen["started"] and sql.lstrip().upper().startswith("SELECT"):
            # The cancel has just read the run's status: a worker claims it now.
            seen["started"] = True
            worker.start()
            worker.join(timeout=1.0)  # a claim blocked by the cancel's lock waits; go on
        return result

    with connection.execute_wrapper(claim_after_the_cancel_reads_the_run):
        cancel_run(run)
    worker.join(timeout=10)

    assert seen["started"], "the cancel never read the run"
    status = Run.objects.values_list("status", flat=True).get(pk=run.pk)
    if claimed and claimed[0] is not None:
        assert status == Run.Status.RUNNING  # its worker owns it and stops at its next step
        assert Run.objects.get(pk=run.pk).cancel_requested_at is not None
    else:
        assert status == Run.Status.CANCELLED
        assert not run.events.filter(type="run.started").exists()
