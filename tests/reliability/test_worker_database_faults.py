"""A task worker keeps working through lost database connections: its backend
terminated while idle or mid-run, it reconnects, settles what it held, and the
next run completes; the pool of a server never hands a dead connection to a
request."""

import signal
import urllib.request
from concurrent.futures import ThreadPoolExecutor

import pytest

from publication.models import AnswerBlock
from runs.models import Run
from tests.realtime.processes import free_port
from tests.reliability.support import (
    Worker,
    audit,
    backends_of,
    reliability_env,
    start_named_daphne,
    statuses,
    terminate_backends,
    wait_for,
)

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.slow]


@pytest.fixture
def worker(postgres):
    process = Worker(reliability_env(), args=("--concurrency", "4"))
    yield process
    process.stop()


def _completes(run, timeout=30.0) -> str:
    wait_for(
        lambda: statuses([run.pk]).get(run.pk) in {"COMPLETED", "PARTIAL", "FAILED"},
        timeout=timeout,
        what=f"run {run.pk} to end",
    )
    return statuses([run.pk])[run.pk]


def test_an_idle_worker_whose_backend_is_terminated_still_completes_the_next_run(worker, make_run):
    first = make_run({"text": "第一"})
    assert _completes(first) == "COMPLETED", worker.output()
    wait_for(lambda: backends_of(worker.name), timeout=10, what="the worker's sessions")

    assert terminate_backends(worker.name) >= 1

    second = make_run({"text": "第二"})
    assert _completes(second) == "COMPLETED", worker.output()
    assert worker.alive(), worker.output()


def test_a_run_whose_connection_is_cut_while_its_model_waits_completes_and_the_worker_goes_on(
    worker, make_run
):
    slow = make_run(
        {"search": "营收"},
        {"answerPart": "增长 [[cite:{{c1}}]]"},
        {"sleep": 1.5},
        {"text": "结论"},
    )
    wait_for(
        lambda: AnswerBlock.objects.filter(run_id=slow.pk).exists(),
        timeout=30,
        what="the run's first block",
    )
    # During the model's wait (the sleep step): every session the worker holds,
    # the pooled one the run gave back at the step boundary included.
    assert terminate_backends(worker.name) >= 1
    status = _completes(slow, timeout=40)
    run = Run.objects.get(pk=slow.pk)
    # The next step took a fresh connection: the run went on to its end.
    assert (status, run.reason) == ("COMPLETED", ""), worker.output()
    assert audit([slow.pk]) == {"stuck": 0, "lost": 0, "duplicated": 0, "phantom": 0, "blocks": 2}

    after = make_run({"text": "之后"})
    assert _completes(after) == "COMPLETED", worker.output()
    assert worker.alive(), worker.output()
    worker.popen.send_signal(signal.SIGTERM)
    assert worker.wait(20) == 0, worker.output()


def test_a_server_whose_backends_are_all_terminated_answers_the_next_requests_200(
    postgres, alice, make_run
):
    run = make_run({"text": "hi"})
    port = free_port()
    name = "sparktide-daphne-pool"
    server = start_named_daphne(port, reliability_env(SPARKTIDE_DB_POOL_SIZE="4"), name)
    url = f"http://127.0.0.1:{port}/v1/apps/{run.app.slug}/runs/{run.pk}"

    def get() -> int:
        request = urllib.request.Request(
            url, headers={"Authorization": f"Bearer {alice.raw_token}", "Host": "127.0.0.1"}
        )
        try:
            with urllib.request.urlopen(request, timeout=10) as response:
                return response.status
        except urllib.error.HTTPError as error:
            return error.code

    try:
        # Fill the pool: several requests at once leave several idle connections.
        with ThreadPoolExecutor(4) as pool:
            before = list(pool.map(lambda _: get(), range(12)))
        assert before == [200] * 12, server.output()
        assert terminate_backends(name) >= 2

        after = [get() for _ in range(20)]
    finally:
        output = server.output()
        server.stop()
    assert after == [200] * 20, output
