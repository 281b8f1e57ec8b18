"""Fixtures of the answer tests: the demo manifest and a second, different one, applied
with ``apply_manifest``; runs are REAL extractive runs executed by the engine, read back
through the REST endpoints a business app uses."""

from dataclasses import dataclass
from io import StringIO
from pathlib import Path

import pytest
from django.contrib.auth import get_user_model
from django.core.management import call_command

# The answer checks have one home (evaluation/checks.py), shared with bench/answers.py and
# the evaluation runner; the tests here import them from this module as before.
from evaluation.checks import cited_ids, figures_before_markers, numbers  # noqa: F401
from runs.models import Run
from runtime.engine import execute_run
from runtime.services import start_run
from tenancy.models import App
from tests.factories import client_for

ROOT = Path(__file__).resolve().parents[2]
DEMO_MANIFEST = ROOT / "demo" / "manifest.yaml"
SECOND_MANIFEST = Path(__file__).with_name("second_manifest.yaml")


@dataclass
class Desk:
    """An applied manifest's app and a user who asks questions through REST."""

    app: App
    user: object
    token: str

    def ask(self, question: str, *, session_id: str = "", user=None, token=None) -> "Answer":
        owner = user or self.user
        run = start_run(
            user=owner, app=self.app, agent_key="researcher", input=question, session_id=session_id
        )
        execute_run(run.pk)
        return Answer(self, Run.objects.get(pk=run.pk), token or self.token)


@dataclass
class Answer:
    desk: Desk
    run: Run
    token: str

    def _get(self, path: str):
        response = client_for(token=self.token).get(
            f"/v1/apps/{self.desk.app.slug}/runs/{self.run.pk}{path}"
        )
        assert response.status_code == 200, response.content
        return response.json()

    @property
    def texts(self) -> list[str]:
        blocks = self._get("/answer")["blocks"]
        return [b["content"]["text"] for b in blocks if b["state"] == "visible"]

    @property
    def text(self) -> str:
        return "\n\n".join(self.texts)

    def verified(self) -> list[str]:
        events = self._get("/events")["events"]
        return [
            r["id"]
            for e in events
            if e["type"] == "citation.verified"
            for r in e["data"]["references"]
            if r["status"] == "VERIFIED"
        ]

    def preview(self, citation_id: str) -> dict:
        return self._get(f"/citations/{citation_id}/preview")


def _apply(path: Path) -> None:
    call_command("apply_manifest", str(path), stdout=StringIO())


@pytest.fixture
def demo(db) -> Desk:
    _apply(DEMO_MANIFEST)
    return Desk(
        App.objects.get(slug="research-desk"),
        get_user_model().objects.get(username="analyst"),
        "st_demo_analyst_token_0001",
    )


@pytest.fixture
def second(db) -> Desk:
    _apply(SECOND_MANIFEST)
    return Desk(
        App.objects.get(slug="pine-desk"),
        get_user_model().objects.get(username="reader"),
        "st_pine_reader_token_000001",
    )


# Fixtures through which a test reaches the database.
_DATABASE = {"db", "transactional_db", "django_db_reset_sequences", "django_db_serialized_rollback"}


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """The reader's own tests — the extractive provider driven without a database
    (tests/answers/reader.py) — are marked ``reader``: they read the same on either
    database, so ``make test`` runs them once, in its SQLite pass (Makefile)."""
    here = Path(__file__).parent
    for item in items:
        if here not in item.path.parents:
            continue
        if item.get_closest_marker("django_db") is None and not _DATABASE & set(item.fixturenames):
            item.add_marker(pytest.mark.reader)
