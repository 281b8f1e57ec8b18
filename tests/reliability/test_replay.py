"""A step's unit of work cut inside its transaction is replayed, and the run completes
(docs/reliability.md, "A step's write through a lost connection").

Each test executes a real run in this process and terminates its own PostgreSQL session
(pg_terminate_backend, what a restart or a failover does to it) at one exact point inside
a transaction of a step — the search's citation issuance, Publication's commit before its
statements, Publication's commit with only its COMMIT left. The transaction is rolled
back, the engine replays the cut unit once the database answers, and the run ends exactly
as the same script ends without the cut: COMPLETED, the same blocks, the same events in
the same order, the same journal, every attempt COMMITTED once."""

import json
import re

import psycopg
import pytest
from django.db import OperationalError, connection

import citations.issuance
import publication.pipeline
import runtime.durable
import runtime.engine
from foundation.faults import maybe_fault
from publication.models import AnswerBlock, BlockRevision, PublicationAttempt
from runs.models import AgentCall, JournalEntry, Run, RunEvent
from runtime.engine import execute_run
from runtime.recovery import settle_interrupted_run
from tests import factories
from tests.reliability.support import conninfo

pytestmark = pytest.mark.django_db(transaction=True)

SCRIPT = (
    {"search": "营收"},
    {"callAgent": "helper", "task": "查营收"},
    {"answerPart": "一 [[cite:{{c1}}]]"},
    {"answerPart": "二 [[cite:{{c1}}]]"},
    {"text": "结论：营收增长。"},
)


def cut_own_session() -> None:
    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_backend_pid()")
        pid = cursor.fetchone()[0]
    with psycopg.connect(**conninfo(), autocommit=True) as admin:
        admin.execute("SELECT pg_terminate_backend(%s)", [pid])


def once(original, cuts: list[str], name: str):
    """``original``, the first call of which runs on a session cut just before it."""

    def wrapper(*args, **kwargs):
        if not cuts.count(name):
            cuts.append(name)
            assert connection.in_atomic_block  # inside the unit's own transaction
            cut_own_session()
        return original(*args, **kwargs)

    return wrapper


def outcome(run_id: str) -> dict:
    """What a reader of the run can see, without the IDs and times that differ per run."""
    run = Run.objects.get(pk=run_id)
    return {
        "status": run.status,
        "reason": run.reason,
        "events": list(
            RunEvent.objects.filter(run_id=run_id).order_by("seq").values_list("type", flat=True)
        ),
        "seqs_gapless": list(
            RunEvent.objects.filter(run_id=run_id).order_by("seq").values_list("seq", flat=True)
        )
        == list(range(1, RunEvent.objects.filter(run_id=run_id).count() + 1)),
        "blocks": [
            (b.delivery_ordinal, b.current_revision, b.origin)
            for b in AnswerBlock.objects.filter(run_id=run_id).order_by("delivery_ordinal")
        ],
        "texts": [
            re.sub(r"cite_[0-9a-z]+", "cite_…", json.dumps(content, ensure_ascii=False))
            for content in BlockRevision.objects.filter(run_id=run_id)
            .order_by("block__delivery_ordinal", "revision")
            .values_list("content", flat=True)
        ],
        "attempts": list(
            PublicationAttempt.objects.filter(run_id=run_id)
            .order_by("id")
            .values_list("outcome", flat=True)
        ),
        "calls": list(
            AgentCall.objects.filter(run_id=run_id).order_by("depth").values_list("depth", "status")
        ),
        "citations": Run.objects.values_list("citation_count", flat=True).get(pk=run_id),
        "journal": list(
            JournalEntry.objects.filter(run_id=run_id)
            .order_by("at", "id")
            .values_list("kind", "tool")
        ),
    }


def test_a_search_a_sub_agent_and_two_commits_cut_inside_their_transactions_are_replayed(
    postgres, make_run, monkeypatch, app, knowledge
):
    """Four cuts in one run: inside the search's citation issuance, inside the opening of
    a sub-agent's call, inside the first block's commit (its statements), and in the second
    block's commit with only its COMMIT left — there the outcome is unknown until the
    attempt is read back: not landed, so the commit is made again. The run completes as
    the same script completes without a cut."""
    helper = factories.make_agent(
        app.tenant, "helper", model=factories.scripted({"text": "营收增长"}), pin_to=[app]
    )
    reference = make_run(*SCRIPT, sub_agents=[helper.agent])
    execute_run(reference.pk)
    expected = outcome(reference.pk)
    assert expected["status"] == Run.Status.COMPLETED, expected
    assert expected["seqs_gapless"], expected
    assert len(expected["blocks"]) == 3 and expected["attempts"] == ["COMMITTED"] * 3, expected
    assert expected["citations"] > 0, expected
    assert expected["calls"] == [(0, "COMPLETED"), (1, "COMPLETED")], expected

    cuts: list[str] = []
    monkeypatch.setattr(
        citations.issuance,
        "_issue_handles",
        once(citations.issuance._issue_handles, cuts, "issuance"),
    )
    monkeypatch.setattr(
        publication.pipeline,
        "write_new_block",
        once(publication.pipeline.write_new_block, cuts, "commit statements"),
    )

    def fault(point: str) -> None:
        # the second block (seen by its own transaction), only its COMMIT left
        second = point == "during_publication_commit" and cuts == [
            "issuance",
            "sub-agent's call",
            "commit statements",
        ]
        if second and commits() == 2:
            cuts.append("before COMMIT")
            cut_own_session()
        maybe_fault(point)

    monkeypatch.setattr(
        runtime.engine,
        "lock_for_execution",
        once(runtime.engine.lock_for_execution, cuts, "sub-agent's call"),
    )
    run = make_run(*SCRIPT, sub_agents=[helper.agent])

    def commits() -> int:
        return AnswerBlock.objects.filter(run_id=run.pk).count()

    monkeypatch.setattr(publication.pipeline, "maybe_fault", fault)
    execute_run(run.pk)
    assert cuts == ["issuance", "sub-agent's call", "commit statements", "before COMMIT"]
    assert outcome(run.pk) == expected


def test_a_commit_cut_past_the_retry_bound_ends_the_run_worker_lost_with_nothing_recorded(
    postgres, make_run, monkeypatch
):
    """The replay is bounded (runtime/durable.py ``retry_bound``: the worker's wait for a
    connection). Past it the cut reaches the worker, which recovers the run as before:
    WORKER_LOST, the cut candidate's preview settled as rejected, no block, no failure
    recorded by the execution itself."""
    cuts: list[str] = []
    monkeypatch.setattr(runtime.durable, "retry_bound", lambda: 0.0)
    monkeypatch.setattr(
        publication.pipeline,
        "write_new_block",
        once(publication.pipeline.write_new_block, cuts, "commit statements"),
    )
    run = make_run({"answerPart": "一"}, {"text": "二"})
    with pytest.raises(OperationalError):
        execute_run(run.pk)
    assert cuts == ["commit statements"]
    assert list(PublicationAttempt.objects.filter(run=run).values_list("outcome", flat=True)) == [
        "PREVIEWED"
    ]
    settle_interrupted_run(run.pk)  # what the worker does with the error
    found = outcome(run.pk)
    assert (found["status"], found["reason"], found["blocks"]) == ("FAILED", "WORKER_LOST", [])
    assert found["attempts"] == ["REJECTED"]
    assert found["events"][-2:] == ["answer.rejected", "run.failed"], found["events"]
