"""Query budgets of one scripted run and of what an SDK user sends to start and follow
it (docs/performance.md "Runs under load"): a regression fails here.

Counted as in production (``transaction=True``: no test savepoints): every BEGIN and
COMMIT Django logs is in the count. The script is bench/load.py's: ``search`` →
``answerPart`` citing the first result → ``text``. Each run here is the second of its
agent, so nothing compiled once per process is counted.
"""

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from runs.models import JournalEntry, Run, RunEvent
from runtime.engine import execute_run
from tests import factories
from tests.factories import client_for

pytestmark = pytest.mark.django_db(transaction=True)

STEPS = ({"search": "营收"}, {"answerPart": "营收增长 [[cite:{{c1}}]]"}, {"text": "结论"})

# claim 4 (BEGIN, the run and what the engine needs of it locked in one SELECT, its
# status change and run.started in one statement, COMMIT), the root call and
# agent.started 2, three step heartbeats (two of them also write the receipts kept
# since the step's tool ran), five journal writes of their own (each before a side
# effect), retrieval, citations, two Publication commits, verification, the
# call's end with agent.completed 1, finish 4 (BEGIN, lock, the terminal status and its event in one
# statement, COMMIT). Publication's, retrieval's and citations' own statements are
# budgeted in test_query_budgets.py and their modules' tests.
# 62 before the preview took its duplicate check into its INSERT (two previews); 60 → 63
# when managed search became BM25 with stored statistics: the statistics, the declared
# vocabulary, the query's term frequencies, the candidates, the count of ACL-refused
# chunks and the winners, in place of one staged statement (the hits it issues changed too).
# 63 → 62 when the ACL-refused count rode in the candidates' first statement.
# 62 → 60 when a process kept what published versions' statistics said: the run measured
# searches the version the first run searched, so neither its statistics nor the term's
# frequency is read again (a first search of a version still reads both).
RUN_BUDGET = 60
# token, app (the member's access), the member check of start_run, the pin, the run's
# INSERT (atomic alone: no BEGIN/COMMIT), the task row, its NOTIFY.
CREATE_BUDGET = 7
# token, the run with the owner's membership and history permission (one query), the ticket.
TICKET_BUDGET = 3


@pytest.fixture
def world(tenant, app, alice, knowledge):
    # The budgets are PostgreSQL's (one-statement appends, the heartbeat that carries
    # the journal); SQLite takes the ORM's paths.
    factories.require(connection.vendor == "postgresql", "the budgets are PostgreSQL's")
    factories.make_agent(
        tenant, "waiting", model=factories.scripted(*STEPS), knowledge=[knowledge], pin_to=[app]
    )
    client = client_for(alice)
    base = f"/v1/apps/{app.slug}/runs"

    def create() -> str:
        response = client.post(base, {"agent": "waiting", "input": "营收？"}, format="json")
        assert response.status_code == 201, response.content
        return response.json()["id"]

    execute_run(create())  # the first run of the process compiles what is compiled once
    return client, base, create


def test_one_scripted_run_executes_within_its_statement_budget(world):
    _client, _base, create = world
    run_id = create()

    with CaptureQueriesContext(connection) as queries:
        assert execute_run(run_id) == Run.Status.COMPLETED

    assert len(queries.captured_queries) == RUN_BUDGET, "\n".join(
        q["sql"][:160] for q in queries.captured_queries
    )
    types = list(RunEvent.objects.filter(run_id=run_id).values_list("type", flat=True))
    assert types[0] == "run.started" and types[-1] == "run.completed"
    assert types.count("answer.published") == 2
    assert JournalEntry.objects.filter(run_id=run_id).count() == 9


def test_creating_a_run_takes_a_fixed_number_of_queries(world, django_assert_num_queries):
    client, base, _create = world
    with django_assert_num_queries(CREATE_BUDGET):
        response = client.post(base, {"agent": "waiting", "input": "营收？"}, format="json")
    assert response.status_code == 201
    run = Run.objects.get(pk=response.json()["id"])
    assert run.status == Run.Status.QUEUED
    from django_tasks_db.models import DBTaskResult

    assert DBTaskResult.objects.filter(args_kwargs__args=[run.pk]).count() == 1


def test_a_ticket_for_a_new_run_takes_a_fixed_number_of_queries(world, django_assert_num_queries):
    client, base, create = world
    run_id = create()
    with django_assert_num_queries(TICKET_BUDGET):
        response = client.post(f"{base}/{run_id}/events/ticket")
    assert response.status_code == 201
    assert response.json()["ticket"]
