"""A version's status moves by its model's rule (agents/models.py, knowledge/models/versions.py
``transition_refusal``) however it is changed: a move the model forbids on ``save()`` is
refused by ``apply_manifest`` before anything is written, for the same reason, in the same
words."""

from io import StringIO

import pytest
import yaml
from django.core.management import call_command
from django.core.management.base import CommandError

from agents.models import AgentVersion
from knowledge.models import ImmutableVersionError, KnowledgeVersion
from tests.foundations.test_manifest import base_manifest

pytestmark = pytest.mark.django_db


def _apply(tmp_path, data: dict) -> str | None:
    """None when the manifest applies, else its error."""
    path = tmp_path / "manifest.yaml"
    path.write_text(yaml.safe_dump(data, allow_unicode=True), encoding="utf-8")
    try:
        call_command("apply_manifest", str(path), stdout=StringIO())
    except CommandError as refused:
        return str(refused)
    return None


def _model_reason(version, status: str) -> str:
    """Why the model itself refuses ``version`` going to ``status`` on save()."""
    version.refresh_from_db()
    version.status = status
    with pytest.raises(ImmutableVersionError) as refused:
        version.save()
    # "<label>: <reason>": the reason is what the manifest must give too.
    return refused.value.detail.split(": ", 1)[-1]


def _tenant(data: dict) -> dict:
    return data["tenants"][0]


KNOWLEDGE_MOVES = [("PUBLISHED", "DRAFT"), ("REVOKED", "PUBLISHED"), ("REVOKED", "DRAFT")]
AGENT_MOVES = [("PUBLISHED", "DRAFT"), ("RETIRED", "PUBLISHED"), ("RETIRED", "DRAFT")]


@pytest.mark.parametrize(("before", "after"), KNOWLEDGE_MOVES)
def test_a_knowledge_move_the_model_forbids_is_refused_by_the_manifest_for_its_reason(
    tmp_path, before, after
):
    data = base_manifest()
    entry = _tenant(data)["knowledge"][1]["versions"][0]  # crm@1, leased by no app
    assert _apply(tmp_path, data) is None  # published first, then moved to ``before``
    entry["status"] = before
    assert _apply(tmp_path, data) is None
    version = KnowledgeVersion.objects.get(knowledge__key="crm", version="1")
    assert version.status == before
    reason = _model_reason(version, after)

    entry["status"] = after
    message = _apply(tmp_path, data)

    assert message is not None and ".knowledge[1].versions[0].status: " in message
    assert f"is {before}; it cannot become {after} ({reason})" in message
    version.refresh_from_db()
    assert version.status == before


@pytest.mark.parametrize(("before", "after"), AGENT_MOVES)
def test_an_agent_move_the_model_forbids_is_refused_by_the_manifest_for_its_reason(
    tmp_path, before, after
):
    data = base_manifest()
    # helper@1: a version of its own, pinned by no app and called by no pinned version.
    researcher = _tenant(data)["agents"][1]["versions"][0]
    researcher["subAgents"] = []
    researcher["model"]["steps"] = researcher["model"]["steps"][:2]
    entry = _tenant(data)["agents"][0]["versions"][0]
    assert _apply(tmp_path, data) is None  # published first, then moved to ``before``
    entry["status"] = before
    assert _apply(tmp_path, data) is None
    version = AgentVersion.objects.get(agent__key="helper", version="1")
    assert version.status == before
    reason = _model_reason(version, after)

    entry["status"] = after
    message = _apply(tmp_path, data)

    assert message is not None and ".agents[0].versions[0].status: " in message
    assert f"is {before}; it cannot become {after} ({reason})" in message
    version.refresh_from_db()
    assert version.status == before


def test_every_move_the_tables_forbid_has_a_reason_and_every_allowed_one_none():
    for model in (KnowledgeVersion, AgentVersion):
        for before, allowed in model.TRANSITIONS.items():
            for after in model.Status.values:
                reason = model.transition_refusal(before, after)
                assert (reason is None) == (after in allowed), (model, before, after)


# --- a REMOTE version's own deadline: the 15 s cap -----------------------------------------


@pytest.mark.parametrize("seconds", [0, -1, 15.5, 30])
def test_a_deadline_the_model_refuses_is_refused_by_the_manifest_for_the_same_reason(
    tmp_path, seconds
):
    """``remote_timeout_refusal`` (knowledge/models/versions.py, beside the column's constraint) is
    what the admin's form (``full_clean``) and the manifest both answer."""
    from django.core.exceptions import ValidationError

    from knowledge.models import Knowledge, remote_timeout_refusal
    from tenancy.models import Tenant

    reason = remote_timeout_refusal(seconds)
    assert reason is not None and f"got {seconds:g}" in reason
    tenant = Tenant.objects.create(key="t", name="t")
    crm = Knowledge.objects.create(tenant=tenant, key="crm", type=Knowledge.Type.REMOTE)
    version = KnowledgeVersion(
        knowledge=crm,
        version="1",
        endpoint="http://127.0.0.1:9100/retrieve",
        secret="s",
        timeout_seconds=seconds,
    )
    with pytest.raises(ValidationError) as by_the_form:
        version.full_clean()
    assert by_the_form.value.message_dict["timeout_seconds"] == [reason]

    data = base_manifest()
    _tenant(data)["knowledge"][1]["versions"][0]["timeoutSeconds"] = seconds
    message = _apply(tmp_path, data)
    assert message is not None
    assert message.endswith(f".knowledge[1].versions[0].timeoutSeconds: {reason}")


def test_a_deadline_within_the_cap_is_no_refusal():
    from knowledge.models import MAX_REMOTE_TIMEOUT_SECONDS, remote_timeout_refusal

    assert remote_timeout_refusal(0.1) is None
    assert remote_timeout_refusal(float(MAX_REMOTE_TIMEOUT_SECONDS)) is None
