"""manage.py export_manifest writes the current state as a manifest apply_manifest accepts:
applied to the same database it changes nothing (published content matches exactly), and
applied to an empty one it rebuilds a state that exports to the same manifest."""

import io
from pathlib import Path

import pytest
import yaml
from django.contrib.auth import get_user_model
from django.core.management import call_command

from agents.models import AgentPin
from knowledge.models import Document, KnowledgeVersion, Lease
from provisioning.export import document_pages
from provisioning.manifest import apply_manifest, parse_manifest, read_manifest
from tenancy.models import App, Tenant

ROOT = Path(__file__).resolve().parents[2]
DEMO = ROOT / "demo" / "manifest.yaml"

EXTRA = """
tenants:
  - key: remote-co
    name: 远端公司
    users: [{username: rita}, {username: sam}]
    knowledge:
      - key: crm
        type: REMOTE
        versions:
          - {version: "1", status: PUBLISHED, endpoint: "http://127.0.0.1:9/retrieve",
             secret: "s3cret-signing-key", timeoutSeconds: 5}
      - key: notes
        type: INLINE
        versions:
          - version: "1"
            status: DRAFT
            documents:
              - key: memo
                title: 纪要
                readers: [rita]
                pages: ["第一页：增长 12.5%。\\n\\n  第二段。", "", "  第三页开头有空格。  ", "😀 第四页。"]
                facts: [{key: growth, value: "12.50", unit: "%", asOf: "2026-09-30", label: 增长}]
    agents:
      - key: helper
        versions:
          - {version: "1", status: PUBLISHED, model: {provider: extractive}, allowedKnowledge: ["crm@1"]}
    apps:
      - slug: remote-desk
        name: 远端工作台
        status: SUSPENDED
        retentionDays: 7
        securityPolicyEpoch: 3
        knowledgeAccessEpoch: 2
        members: [{user: rita, history: true}, {user: sam}]
        leases: [{knowledge: "crm@1", expiresAt: "2030-01-01T00:00:00+00:00", revoked: true}]
        agents: {helper: "1"}
"""


def export(*args) -> str:
    out = io.StringIO()
    call_command("export_manifest", *args, stdout=out)
    return out.getvalue()


@pytest.fixture
def provisioned(db, tmp_path, monkeypatch):
    monkeypatch.setenv("SPARKTIDE_SECRET_CRM_1", "s3cret-signing-key")
    apply_manifest(read_manifest(DEMO))
    extra = tmp_path / "extra.yaml"
    extra.write_text(EXTRA)
    apply_manifest(read_manifest(extra))


def test_the_export_applied_to_the_same_database_changes_nothing(provisioned, tmp_path):
    path = tmp_path / "exported.yaml"
    call_command("export_manifest", str(path), stderr=io.StringIO())
    result = apply_manifest(read_manifest(path))
    assert result.changes == []


def test_the_export_rebuilds_an_empty_database_that_exports_the_same(provisioned, tmp_path):
    first = export()
    AgentPin.objects.all().delete()  # pins protect the versions they pin
    Tenant.objects.all().delete()
    get_user_model().objects.filter(is_staff=False).delete()
    assert not Document.objects.exists()
    path = tmp_path / "exported.yaml"
    path.write_text(first)
    result = apply_manifest(read_manifest(path))
    assert any(line.startswith("+ tenant") for line in result.changes)
    assert export() == first


def test_the_export_says_everything_the_manifest_can_say(provisioned):
    data = yaml.safe_load(export())
    tenant = next(t for t in data["tenants"] if t["key"] == "remote-co")
    crm, notes = tenant["knowledge"]
    assert crm["versions"][0]["secretEnv"] == "SPARKTIDE_SECRET_CRM_1"
    assert "secret" not in crm["versions"][0] and "s3cret" not in export()
    memo = notes["versions"][0]["documents"][0]
    assert memo["readers"] == ["rita"]
    assert memo["facts"] == [
        {"key": "growth", "value": "12.5", "unit": "%", "asOf": "2026-09-30", "label": "增长"}
    ]
    (app,) = tenant["apps"]
    assert app["status"] == "SUSPENDED" and app["retentionDays"] == 7
    assert (app["securityPolicyEpoch"], app["knowledgeAccessEpoch"]) == (3, 2)
    assert app["members"] == [{"user": "rita", "history": True}, {"user": "sam", "history": False}]
    assert app["leases"] == [
        {"knowledge": "crm@1", "expiresAt": "2030-01-01T00:00:00+00:00", "revoked": True}
    ]
    assert app["agents"] == {"helper": "1"}
    assert all("token" not in user for user in tenant["users"])
    parse_manifest(data)  # a manifest the parser accepts as it is


def test_the_export_can_carry_the_secrets_inline(provisioned):
    data = yaml.safe_load(export("--include-secrets"))
    tenant = next(t for t in data["tenants"] if t["key"] == "remote-co")
    assert tenant["knowledge"][0]["versions"][0]["secret"] == "s3cret-signing-key"


def test_pages_come_back_exactly_as_they_were_ingested(provisioned):
    memo = Document.objects.get(key="memo")
    assert document_pages(memo) == [
        "第一页：增长 12.5%。\n\n  第二段。",
        "",
        "  第三页开头有空格。  ",
        "😀 第四页。",
    ]
    for document in Document.objects.all():
        pages = document_pages(document)
        assert len(pages) == document.page_count
        assert "\n\n".join(pages) == document.text


def test_the_demo_state_survives_the_round_trip(provisioned):
    exported = yaml.safe_load(export())
    demo = yaml.safe_load(DEMO.read_text())
    by_key = {t["key"]: t for t in exported["tenants"]}
    for tenant in demo["tenants"]:
        ours = by_key[tenant["key"]]
        for knowledge in tenant.get("knowledge", []):
            theirs = next(k for k in ours["knowledge"] if k["key"] == knowledge["key"])
            for version, exported_version in zip(
                knowledge["versions"], theirs["versions"], strict=True
            ):
                for document, exported_document in zip(
                    version.get("documents", []), exported_version["documents"], strict=True
                ):
                    # The text and the pages are the same; where a page boundary falls
                    # inside blank space between two pages is not stored.
                    pages, again = document["pages"], exported_document["pages"]
                    assert "\n\n".join(again) == "\n\n".join(pages)
                    assert len(again) == len(pages)
                    assert [p.strip() for p in again] == [p.strip() for p in pages]
    assert KnowledgeVersion.objects.filter(status="PUBLISHED").exists()
    assert Lease.objects.exists() and AgentPin.objects.exists() and App.objects.exists()
