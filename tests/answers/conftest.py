"""Fixtures of the answer tests: the demo manifest and a second, different one, applied
with ``apply_manifest``; runs are REAL extractive runs executed by the engine, read back
through the REST endpoints a business app uses."""

import re
from dataclasses import dataclass
from decimal import Decimal
from io import StringIO
from pathlib import Path

import pytest
from django.contrib.auth import get_user_model
from django.core.management import call_command

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


_MARKER = re.compile(r"\[\[(cite|num|block):([^\[\]\s]*)\]\]")
_NUMBER = re.compile(r"\d+(?:,\d{3})*(?:\.\d+)?")


def numbers(text: str) -> list[Decimal]:
    """Every number written in ``text`` (ASCII or full-width digits), as a decimal."""
    import unicodedata

    folded = unicodedata.normalize("NFKC", text)
    return [Decimal(m.group(0).replace(",", "")) for m in _NUMBER.finditer(folded)]


def figures_before_markers(text: str) -> list[tuple[Decimal, str]]:
    """(figure, cite ID) for every number written since the previous marker."""
    out, position = [], 0
    for marker in _MARKER.finditer(text):
        segment = text[position : marker.start()]
        position = marker.end()
        if marker.group(1) == "cite":
            out += [(n, marker.group(2)) for n in numbers(segment)]
    return out


def cited_ids(text: str) -> list[str]:
    return list(dict.fromkeys(m.group(2) for m in _MARKER.finditer(text) if m.group(1) == "cite"))


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
