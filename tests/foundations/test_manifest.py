"""apply_manifest: creates what the file declares, is idempotent and atomic, never
rewrites published content, applies statuses and permissions as declared, and
names the file, the key path and the reason of every error."""

import copy
from datetime import UTC, datetime
from io import StringIO
from pathlib import Path

import pytest
import yaml
from django.contrib.auth import get_user_model
from django.core.management import CommandError, call_command
from guardian.models import UserObjectPermission

from agents.models import Agent, AgentPin, AgentVersion
from knowledge.models import (
    Chunk,
    Document,
    Fact,
    Knowledge,
    KnowledgeVersion,
    Lease,
    user_may_read_document,
)
from tenancy.authentication import authenticate_token
from tenancy.models import ApiToken, App, Membership, Tenant, TenantUser, hash_token
from tests import factories

pytestmark = pytest.mark.django_db

ALICE_TOKEN = "st_test_alice_token_000000001"
DEMO_MANIFEST = Path(__file__).resolve().parents[2] / "demo" / "manifest.yaml"
MODELS = [
    get_user_model(),
    TenantUser,
    ApiToken,
    Tenant,
    App,
    Membership,
    Knowledge,
    KnowledgeVersion,
    Document,
    Chunk,
    Fact,
    Lease,
    Agent,
    AgentVersion,
    AgentVersion.allowed_knowledge.through,
    AgentVersion.sub_agents.through,
    AgentPin,
    UserObjectPermission,
]


def base_manifest() -> dict:
    return {
        "staff": [{"username": "root", "password": "root-password-123"}],
        "tenants": [
            {
                "key": "acme",
                "name": "Acme 资产管理",
                "users": [{"username": "alice", "token": ALICE_TOKEN}, {"username": "bob"}],
                "knowledge": [
                    {
                        "key": "fund-reports",
                        "type": "MANAGED",
                        "versions": [
                            {
                                "version": "2026-10",
                                "status": "PUBLISHED",
                                "documents": [
                                    {
                                        "key": "report-a",
                                        "title": "某基金 2026 年三季度报告",
                                        "sourceVersion": "v3",
                                        "pages": [
                                            "第一页：股票仓位 61.2%。",
                                            "第二页：前十大重仓股 📈。",
                                        ],
                                        "facts": [
                                            {
                                                "key": "equity_weight",
                                                "value": 61.2,
                                                "unit": "%",
                                                "asOf": "2026-09-30",
                                            }
                                        ],
                                    },
                                    {
                                        "key": "memo",
                                        "title": "内部纪要",
                                        "readers": ["alice"],
                                        "pages": ["仅限研究部阅读。"],
                                    },
                                ],
                            }
                        ],
                    },
                    {
                        "key": "crm",
                        "type": "REMOTE",
                        "versions": [
                            {
                                "version": "1",
                                "status": "PUBLISHED",
                                "endpoint": "http://127.0.0.1:9100/retrieve",
                                "secret": "crm-signing-secret",
                                "timeoutSeconds": 15,
                            }
                        ],
                    },
                ],
                "agents": [
                    {
                        "key": "helper",
                        "versions": [
                            {
                                "version": "1",
                                "status": "PUBLISHED",
                                "model": {"provider": "extractive"},
                                "allowedKnowledge": ["fund-reports@2026-10"],
                            }
                        ],
                    },
                    {
                        "key": "researcher",
                        "versions": [
                            {
                                "version": "1",
                                "status": "PUBLISHED",
                                "instructions": "只依据报告回答。",
                                "model": {
                                    "provider": "scripted",
                                    "steps": [
                                        {"search": "仓位", "topK": 3},
                                        {"answerPart": "仓位 61.2% [[cite:{{c1}}]]"},
                                        {"callAgent": "helper", "task": "补充"},
                                    ],
                                },
                                "allowedKnowledge": ["fund-reports@2026-10", "crm@1"],
                                "subAgents": ["helper"],
                                "maxSteps": 20,
                            }
                        ],
                    },
                ],
                "apps": [
                    {
                        "slug": "business",
                        "name": "业务应用",
                        "status": "ACTIVE",
                        "retentionDays": 30,
                        "members": [
                            {"user": "alice", "history": True},
                            {"user": "bob", "history": True},
                        ],
                        "leases": [{"knowledge": "fund-reports@2026-10", "expiresAt": None}],
                        "agents": {"researcher": "1"},
                    }
                ],
            }
        ],
    }


@pytest.fixture
def manifest_file(tmp_path):
    def write(data: dict | str, name: str = "manifest.yaml") -> Path:
        path = tmp_path / name
        text = data if isinstance(data, str) else yaml.safe_dump(data, allow_unicode=True)
        path.write_text(text, encoding="utf-8")
        return path

    return write


@pytest.fixture
def apply(manifest_file):
    def run(data: dict | str, *args: str) -> str:
        out = StringIO()
        call_command("apply_manifest", str(manifest_file(data)), *args, stdout=out)
        return out.getvalue()

    return run


@pytest.fixture
def apply_error(manifest_file):
    def run(data: dict | str) -> str:
        path = manifest_file(data, "broken.yaml")
        with pytest.raises(CommandError) as excinfo:
            call_command("apply_manifest", str(path), stdout=StringIO())
        message = str(excinfo.value)
        assert message.startswith(f"{path}: ")
        return message

    return run


def snapshot() -> dict:
    return {model.__name__: list(model.objects.order_by("pk").values()) for model in MODELS}


def user(username: str):
    return get_user_model().objects.get(username=username)


def document(key: str) -> Document:
    return Document.objects.get(key=key)


def tenant0(data: dict) -> dict:
    return data["tenants"][0]


# ---------------------------------------------------------------- creating


def test_applying_a_manifest_creates_what_it_declares(apply):
    apply(base_manifest())
    tenant = Tenant.objects.get(key="acme")
    assert tenant.name == "Acme 资产管理"
    assert set(TenantUser.objects.values_list("user__username", flat=True)) == {"alice", "bob"}
    version = KnowledgeVersion.objects.get(knowledge__key="fund-reports", version="2026-10")
    assert version.status == KnowledgeVersion.Status.PUBLISHED
    report = version.documents.get(key="report-a")
    assert report.page_count == 2 and report.source_version == "v3"
    assert report.facts.get().display() == "61.2%"
    remote = KnowledgeVersion.objects.get(knowledge__key="crm")
    assert (remote.endpoint, remote.secret, remote.timeout_seconds) == (
        "http://127.0.0.1:9100/retrieve",
        "crm-signing-secret",
        15.0,
    )
    researcher = AgentVersion.objects.get(agent__key="researcher")
    assert researcher.status == AgentVersion.Status.PUBLISHED
    assert {k.label for k in researcher.allowed_knowledge.all()} == {
        "fund-reports@2026-10",
        "crm@1",
    }
    assert [a.key for a in researcher.sub_agents.all()] == ["helper"]
    app = App.objects.get(slug="business")
    assert app.memberships.count() == 2
    assert Lease.objects.current().filter(app=app).exists()
    assert AgentPin.objects.get(app=app).version == researcher
    root = user("root")
    assert root.is_staff and root.is_superuser and root.check_password("root-password-123")


def test_a_fixed_token_is_issued_as_given_and_stored_hashed(apply):
    apply(base_manifest())
    token = ApiToken.objects.get(user__username="alice")
    assert token.digest == hash_token(ALICE_TOKEN)
    assert authenticate_token(ALICE_TOKEN) == user("alice")


def test_a_generated_token_is_printed_once(apply):
    first = apply(base_manifest())
    line = next(line for line in first.splitlines() if line.strip().startswith("acme/bob: "))
    raw = line.split(": ", 1)[1].strip()
    assert authenticate_token(raw) == user("bob")
    second = apply(base_manifest())
    assert raw not in second
    assert ApiToken.objects.filter(user__username="bob").count() == 1


def test_a_user_whose_tokens_were_all_revoked_gets_a_new_one(apply):
    apply(base_manifest())
    ApiToken.objects.get(user__username="bob").revoke()
    output = apply(base_manifest())
    assert "acme/bob: st_" in output
    assert ApiToken.objects.usable().filter(user__username="bob").count() == 1


def test_a_revoked_fixed_token_stays_revoked(apply):
    apply(base_manifest())
    ApiToken.objects.get(user__username="alice").revoke()
    output = apply(base_manifest())
    assert "stays revoked" in output
    assert authenticate_token(ALICE_TOKEN) is None


def test_readers_restrict_a_document_to_exactly_those_users(apply):
    apply(base_manifest())
    assert document("memo").restricted
    assert user_may_read_document(user("alice"), document("memo"))
    assert not user_may_read_document(user("bob"), document("memo"))
    assert not document("report-a").restricted
    assert user_may_read_document(user("bob"), document("report-a"))


# ---------------------------------------------------------------- idempotent, atomic, dry run


def test_applying_the_same_file_twice_changes_nothing(apply):
    apply(base_manifest())
    before = snapshot()
    output = apply(base_manifest())
    assert "no changes" in output
    assert snapshot() == before


def test_the_summary_counts_what_changed(apply):
    first = apply(base_manifest())
    assert "changes." in first and "+ tenant acme" in first
    data = base_manifest()
    tenant0(data)["apps"][0]["status"] = "SUSPENDED"
    output = apply(data)
    assert "1 change." in output
    assert "~ app business: status ACTIVE → SUSPENDED" in output


def test_a_dry_run_reports_the_changes_and_writes_nothing(apply):
    before = snapshot()
    output = apply(base_manifest(), "--dry-run")
    assert "would be made; nothing was written" in output
    assert "+ tenant acme" in output
    assert "Generated tokens" not in output  # they were rolled back with the rest
    assert snapshot() == before


def test_an_error_late_in_the_file_leaves_the_database_untouched(apply, apply_error):
    apply(base_manifest())
    data = base_manifest()
    tenant0(data)["users"].append({"username": "carol"})
    tenant0(data)["knowledge"][0]["versions"].append(
        {"version": "2026-11", "status": "PUBLISHED", "documents": []}
    )
    tenant0(data)["apps"][0]["status"] = "SUSPENDED"
    tenant0(data)["apps"][0]["members"].append({"user": "mallory"})  # the very last key
    before = snapshot()
    apply_error(data)
    assert snapshot() == before


def test_an_invalid_file_on_an_empty_database_creates_nothing(apply_error):
    data = base_manifest()
    tenant0(data)["apps"][0]["agents"] = {"researcher": "9"}
    before = snapshot()
    apply_error(data)
    assert snapshot() == before


# ---------------------------------------------------------------- errors name the key path


def _set(data: dict, path: list, value) -> dict:
    target = data
    for key in path[:-1]:
        target = target[key]
    target[path[-1]] = value
    return data


def _mutate(*path_and_value):
    *path, value = path_and_value
    return lambda data: _set(data, ["tenants", 0, *path], value)


INVALID = {
    "unknown provider": (
        _mutate("agents", 0, "versions", 0, "model", {"provider": "gpt"}),
        "tenants[0].agents[0].versions[0].model.provider",
        "must be one of scripted, extractive, openai",
    ),
    "scripted step with two kinds": (
        _mutate("agents", 1, "versions", 0, "model", "steps", 1, {"text": "a", "fail": "b"}),
        "tenants[0].agents[1].versions[0].model.steps[1]",
        "exactly one of search, text, answerPart, callAgent, fail, sleep",
    ),
    "scripted step with a foreign key": (
        _mutate("agents", 1, "versions", 0, "model", "steps", 0, {"search": "仓位", "task": "x"}),
        "tenants[0].agents[1].versions[0].model.steps[0].task",
        "unknown key for a search step",
    ),
    "scripted model without steps": (
        _mutate("agents", 1, "versions", 0, "model", {"provider": "scripted"}),
        "tenants[0].agents[1].versions[0].model.steps",
        "is required",
    ),
    "openai model without apiKeyEnv": (
        _mutate(
            "agents",
            0,
            "versions",
            0,
            "model",
            {"provider": "openai", "baseUrl": "http://127.0.0.1:1/v1", "model": "m"},
        ),
        "tenants[0].agents[0].versions[0].model.apiKeyEnv",
        "is required",
    ),
    "timeout above 15 seconds": (
        _mutate("knowledge", 1, "versions", 0, "timeoutSeconds", 30),
        "tenants[0].knowledge[1].versions[0].timeoutSeconds",
        "at most 15 seconds, got 30",
    ),
    "remote version without a secret": (
        lambda data: tenant0(data)["knowledge"][1]["versions"][0].pop("secret") and data,
        "tenants[0].knowledge[1].versions[0].secret",
        "exactly one of secret or secretEnv",
    ),
    "unknown user in members": (
        _mutate("apps", 0, "members", 1, {"user": "mallory", "history": True}),
        "tenants[0].apps[0].members[1].user",
        "unknown user 'mallory'",
    ),
    "unknown reader": (
        _mutate("knowledge", 0, "versions", 0, "documents", 1, "readers", ["alice", "zed"]),
        "tenants[0].knowledge[0].versions[0].documents[1].readers[1]",
        "unknown user 'zed'",
    ),
    "unknown knowledge in allowedKnowledge": (
        _mutate("agents", 0, "versions", 0, "allowedKnowledge", ["nope@1"]),
        "tenants[0].agents[0].versions[0].allowedKnowledge[0]",
        "no knowledge version 'nope@1'",
    ),
    "malformed knowledge label": (
        _mutate("apps", 0, "leases", 0, "knowledge", "fund-reports"),
        "tenants[0].apps[0].leases[0].knowledge",
        "must be 'knowledge-key@version'",
    ),
    "unknown sub-agent": (
        _mutate("agents", 1, "versions", 0, "subAgents", ["ghost"]),
        "tenants[0].agents[1].versions[0].subAgents[0]",
        "no agent 'ghost'",
    ),
    "pin of a version that does not exist": (
        _mutate("apps", 0, "agents", {"researcher": "7"}),
        "tenants[0].apps[0].agents.researcher",
        "has no version '7'",
    ),
    "unknown status": (
        _mutate("knowledge", 0, "versions", 0, "status", "LIVE"),
        "tenants[0].knowledge[0].versions[0].status",
        "must be one of DRAFT, PUBLISHED, REVOKED",
    ),
    "pages not a list": (
        _mutate("knowledge", 0, "versions", 0, "documents", 0, "pages", "正文"),
        "tenants[0].knowledge[0].versions[0].documents[0].pages",
        "must be a list",
    ),
    "duplicate document key": (
        _mutate("knowledge", 0, "versions", 0, "documents", 1, "key", "report-a"),
        "tenants[0].knowledge[0].versions[0].documents[1].key",
        "duplicate document key",
    ),
    "fact value not a number": (
        _mutate("knowledge", 0, "versions", 0, "documents", 0, "facts", 0, "value", "很多"),
        "tenants[0].knowledge[0].versions[0].documents[0].facts[0].value",
        "must be a number",
    ),
    "fixed token too short": (
        _mutate("users", 0, "token", "st_x"),
        "tenants[0].users[0].token",
        "at least 16 characters",
    ),
    "routing to knowledge the version may not use": (
        _mutate(
            "agents",
            0,
            "versions",
            0,
            "routing",
            [{"match": "客户", "knowledge": ["crm@1"]}],
        ),
        "tenants[0].agents[0].versions[0].routing[0].knowledge[0]",
        "is not in allowedKnowledge",
    ),
    "unknown key in a document": (
        _mutate("knowledge", 0, "versions", 0, "documents", 0, "author", "张三"),
        "tenants[0].knowledge[0].versions[0].documents[0].author",
        "unknown key",
    ),
}


@pytest.mark.parametrize("case", INVALID, ids=list(INVALID))
def test_each_kind_of_invalid_manifest_names_the_key_path_and_the_reason(apply_error, case):
    mutate, path, reason = INVALID[case]
    message = apply_error(mutate(base_manifest()))
    assert f": {path}: " in message
    assert reason in message
    assert not Tenant.objects.exists()


def test_an_unknown_top_level_key_is_an_error(apply_error):
    data = base_manifest()
    data["colour"] = "blue"
    message = apply_error(data)
    assert ": colour: unknown key; expected one of: staff, tenants" in message


def test_bad_yaml_is_an_error_with_its_line(apply_error):
    message = apply_error("tenants:\n  - key: acme\n    name: [unclosed\n")
    assert "(top level): invalid YAML at line" in message


def test_a_duplicate_yaml_key_is_an_error(apply_error):
    message = apply_error("tenants: []\ntenants: []\n")
    assert "duplicate key 'tenants'" in message


def test_an_empty_file_is_an_error(apply_error):
    assert "the manifest is empty" in apply_error("")


def test_a_missing_file_is_an_error_naming_it(tmp_path):
    missing = tmp_path / "nope.yaml"
    with pytest.raises(CommandError, match=f"{missing}: .*cannot read the file"):
        call_command("apply_manifest", str(missing))


def test_allowed_knowledge_naming_a_draft_version_is_an_error(apply_error):
    data = base_manifest()
    tenant0(data)["knowledge"][0]["versions"].append(
        {"version": "2026-11", "status": "DRAFT", "documents": []}
    )
    tenant0(data)["agents"][1]["versions"][0]["allowedKnowledge"].append("fund-reports@2026-11")
    message = apply_error(data)
    assert ": tenants[0].agents[1].versions[0].allowedKnowledge[2]: " in message
    assert (
        "'fund-reports@2026-11' is DRAFT; allowedKnowledge may only name PUBLISHED versions"
        in message
    )


def test_changing_a_published_page_is_an_error(apply, apply_error):
    apply(base_manifest())
    data = base_manifest()
    tenant0(data)["knowledge"][0]["versions"][0]["documents"][0]["pages"][1] = (
        "第二页：改过的内容。"
    )
    message = apply_error(data)
    assert ": tenants[0].knowledge[0].versions[0].documents[0].pages[1]: " in message
    assert "published version content cannot change; publish a new version" in message


@pytest.mark.parametrize(
    ("change", "path"),
    [
        (lambda doc: doc.update(title="新标题"), "documents[0].title"),
        (lambda doc: doc.update(sourceVersion="v4"), "documents[0].sourceVersion"),
        (lambda doc: doc["facts"][0].update(value=62), "documents[0].facts[0]"),
        (lambda doc: doc["facts"][0].update(label="股票仓位"), "documents[0].facts[0]"),
        (lambda doc: doc["pages"].append("第三页"), "documents[0].pages"),
        (
            lambda doc: doc.update(pages=["第一页：股票仓位 61.2%。\n\n第二页：前十大重仓股 📈。"]),
            "documents[0].pages",
        ),
    ],
)
def test_any_change_to_published_document_content_is_an_error(apply, apply_error, change, path):
    apply(base_manifest())
    data = base_manifest()
    change(tenant0(data)["knowledge"][0]["versions"][0]["documents"][0])
    message = apply_error(data)
    assert f"tenants[0].knowledge[0].versions[0].{path}" in message
    assert "published version content cannot change" in message


def test_removing_a_document_from_a_published_version_is_an_error(apply, apply_error):
    apply(base_manifest())
    data = base_manifest()
    tenant0(data)["knowledge"][0]["versions"][0]["documents"].pop()
    message = apply_error(data)
    assert ": tenants[0].knowledge[0].versions[0].documents: " in message
    assert "'memo'" in message


def test_changing_a_published_remote_secret_is_an_error(apply, apply_error):
    apply(base_manifest())
    data = base_manifest()
    tenant0(data)["knowledge"][1]["versions"][0]["secret"] = "rotated"
    message = apply_error(data)
    assert ": tenants[0].knowledge[1].versions[0].secret: published version content" in message


def test_changing_a_published_agent_version_is_an_error(apply, apply_error):
    apply(base_manifest())
    data = base_manifest()
    tenant0(data)["agents"][1]["versions"][0]["instructions"] = "换一种说法。"
    message = apply_error(data)
    assert ": tenants[0].agents[1].versions[0].instructions: " in message
    assert "published version content cannot change" in message


def test_revoked_to_published_is_an_error(apply, apply_error):
    data = base_manifest()
    apply(data)
    tenant0(data)["knowledge"][1]["versions"][0]["status"] = "REVOKED"
    apply(data)
    tenant0(data)["knowledge"][1]["versions"][0]["status"] = "PUBLISHED"
    message = apply_error(data)
    assert ": tenants[0].knowledge[1].versions[0].status: " in message
    assert "REVOKED; it cannot become PUBLISHED" in message


def test_published_back_to_draft_is_an_error(apply, apply_error):
    apply(base_manifest())
    data = base_manifest()
    tenant0(data)["knowledge"][0]["versions"][0]["status"] = "DRAFT"
    assert "cannot become DRAFT" in apply_error(data)


def test_pinning_a_draft_agent_version_is_an_error(apply_error):
    data = base_manifest()
    tenant0(data)["agents"][1]["versions"].append(
        {"version": "2", "status": "DRAFT", "model": {"provider": "extractive"}}
    )
    tenant0(data)["apps"][0]["agents"] = {"researcher": "2"}
    message = apply_error(data)
    assert ": tenants[0].apps[0].agents.researcher: " in message
    assert "only a PUBLISHED version can be pinned" in message


def test_an_epoch_cannot_go_down(apply, apply_error):
    data = base_manifest()
    tenant0(data)["apps"][0]["securityPolicyEpoch"] = 3
    apply(data)
    tenant0(data)["apps"][0]["securityPolicyEpoch"] = 2
    assert "tenants[0].apps[0].securityPolicyEpoch: epochs only go up" in apply_error(data)


def test_a_user_of_another_tenant_cannot_be_claimed(apply, apply_error):
    apply(base_manifest())
    data = base_manifest()
    data["tenants"] = [
        {"key": "globex", "name": "Globex", "users": [{"username": "alice"}]},
    ]
    message = apply_error(data)
    assert "tenants[0].users[0].username: user 'alice' already belongs to tenant acme" in message


def test_a_superuser_cannot_be_a_business_user(apply_error):
    """Guardian answers yes to every object permission of a superuser."""
    data = base_manifest()
    data["staff"][0]["username"] = "alice"
    message = apply_error(data)
    assert "tenants[0].users[0].username: 'alice' is a superuser" in message


# ---------------------------------------------------------------- statuses and permissions from the file


def test_removing_a_reader_revokes_document_access(apply):
    data = base_manifest()
    tenant0(data)["knowledge"][0]["versions"][0]["documents"][1]["readers"] = ["alice", "bob"]
    apply(data)
    assert user_may_read_document(user("bob"), document("memo"))
    tenant0(data)["knowledge"][0]["versions"][0]["documents"][1]["readers"] = ["alice"]
    output = apply(data)
    assert "- reader of acme/fund-reports@2026-10/memo: bob" in output
    assert not user_may_read_document(user("bob"), document("memo"))
    assert user_may_read_document(user("alice"), document("memo"))


def test_omitting_readers_opens_the_document_to_every_tenant_user(apply):
    apply(base_manifest())
    data = base_manifest()
    del tenant0(data)["knowledge"][0]["versions"][0]["documents"][1]["readers"]
    apply(data)
    assert not document("memo").restricted
    assert user_may_read_document(user("bob"), document("memo"))
    assert not UserObjectPermission.objects.filter(object_pk=str(document("memo").pk)).exists()


def test_empty_readers_close_the_document_to_everyone(apply):
    data = base_manifest()
    tenant0(data)["knowledge"][0]["versions"][0]["documents"][0]["readers"] = []
    apply(data)
    assert not user_may_read_document(user("alice"), document("report-a"))


def test_history_false_removes_the_history_permission(apply):
    apply(base_manifest())
    app = App.objects.get(slug="business")
    assert user("bob").has_perm("tenancy.view_run_history", app)
    data = base_manifest()
    tenant0(data)["apps"][0]["members"][1]["history"] = False
    apply(data)
    assert not user("bob").has_perm("tenancy.view_run_history", app)
    assert user("alice").has_perm("tenancy.view_run_history", app)
    assert Membership.objects.filter(app=app, user__username="bob").exists()


def test_removing_a_member_removes_the_membership_and_its_history(apply):
    apply(base_manifest())
    data = base_manifest()
    tenant0(data)["apps"][0]["members"].pop()
    apply(data)
    app = App.objects.get(slug="business")
    assert not Membership.objects.filter(app=app, user__username="bob").exists()
    assert not user("bob").has_perm("tenancy.view_run_history", app)


def test_a_lease_can_be_revoked_and_restored_from_the_file(apply):
    apply(base_manifest())
    data = base_manifest()
    tenant0(data)["apps"][0]["leases"][0]["revoked"] = True
    apply(data)
    lease = Lease.objects.get()
    assert lease.revoked_at is not None and not Lease.objects.current().filter(pk=lease.pk).exists()
    tenant0(data)["apps"][0]["leases"][0]["revoked"] = False
    apply(data)
    assert Lease.objects.current().exists()


def test_a_lease_expiry_follows_the_file(apply):
    apply(base_manifest())
    data = base_manifest()
    tenant0(data)["apps"][0]["leases"][0]["expiresAt"] = "2020-01-01T00:00:00Z"
    apply(data)
    lease = Lease.objects.get()
    assert lease.expires_at == datetime(2020, 1, 1, tzinfo=UTC)
    assert not Lease.objects.current().filter(pk=lease.pk).exists()


def test_a_lease_dropped_from_the_file_is_revoked_not_deleted(apply):
    apply(base_manifest())
    data = base_manifest()
    tenant0(data)["apps"][0]["leases"] = []
    apply(data)
    assert Lease.objects.get().revoked_at is not None


def test_pinning_an_older_published_version_rolls_back(apply):
    data = base_manifest()
    tenant0(data)["agents"][1]["versions"].append(
        {
            "version": "2",
            "status": "PUBLISHED",
            "model": {"provider": "extractive"},
            "allowedKnowledge": ["fund-reports@2026-10"],
        }
    )
    tenant0(data)["apps"][0]["agents"] = {"researcher": "2"}
    apply(data)
    assert AgentPin.objects.get().version.version == "2"
    tenant0(data)["apps"][0]["agents"] = {"researcher": "1"}
    output = apply(data)
    assert "~ pin business: researcher 2 → 1" in output
    assert AgentPin.objects.get().version.version == "1"


def test_suspending_an_app_from_the_file(apply):
    apply(base_manifest())
    data = base_manifest()
    tenant0(data)["apps"][0]["status"] = "SUSPENDED"
    tenant0(data)["apps"][0]["knowledgeAccessEpoch"] = 2
    apply(data)
    app = App.objects.get(slug="business")
    assert app.status == App.Status.SUSPENDED and app.knowledge_access_epoch == 2


def test_revoking_a_version_from_the_file_keeps_agents_that_allowed_it_valid(apply):
    """A published agent version keeps naming the revoked knowledge: the file
    still describes it exactly, and revocation is what takes effect."""
    apply(base_manifest())
    data = base_manifest()
    tenant0(data)["knowledge"][0]["versions"][0]["status"] = "REVOKED"
    apply(data)
    version = KnowledgeVersion.objects.get(version="2026-10")
    assert version.status == KnowledgeVersion.Status.REVOKED and version.revoked_at
    assert "no changes" in apply(data)


def test_a_draft_version_follows_the_file_until_it_is_published(apply):
    data = base_manifest()
    versions = tenant0(data)["knowledge"][0]["versions"]
    versions.append(
        {
            "version": "2026-11",
            "status": "DRAFT",
            "documents": [{"key": "d", "title": "草稿", "pages": ["初稿"]}],
        }
    )
    apply(data)
    versions[1]["documents"][0]["pages"] = ["第二稿", "附录"]
    versions[1]["documents"].append({"key": "e", "title": "新增", "pages": ["新增文档"]})
    apply(data)
    draft = KnowledgeVersion.objects.get(version="2026-11")
    assert draft.documents.get(key="d").text == "第二稿\n\n附录"
    assert draft.documents.count() == 2
    versions[1]["status"] = "PUBLISHED"
    apply(data)
    draft.refresh_from_db()
    assert draft.status == KnowledgeVersion.Status.PUBLISHED


def test_a_draft_agent_version_follows_the_file_until_it_is_published(apply):
    data = base_manifest()
    agent_versions = tenant0(data)["agents"][0]["versions"]
    agent_versions.append({"version": "2", "status": "DRAFT", "model": {"provider": "extractive"}})
    apply(data)
    agent_versions[1].update(
        instructions="新指令", maxSteps=5, allowedKnowledge=["crm@1"], status="PUBLISHED"
    )
    apply(data)
    version = AgentVersion.objects.get(agent__key="helper", version="2")
    assert (version.instructions, version.max_steps, version.status) == ("新指令", 5, "PUBLISHED")
    assert [k.label for k in version.allowed_knowledge.all()] == ["crm@1"]


def test_a_secret_can_come_from_the_environment(apply, monkeypatch):
    monkeypatch.setenv("CRM_SECRET", "from-the-environment")
    data = base_manifest()
    version = tenant0(data)["knowledge"][1]["versions"][0]
    del version["secret"]
    version["secretEnv"] = "CRM_SECRET"
    apply(data)
    assert KnowledgeVersion.objects.get(knowledge__key="crm").secret == "from-the-environment"


# ---------------------------------------------------------------- the demo manifest


def test_the_demo_manifest_applies_cleanly_and_is_idempotent():
    out = StringIO()
    call_command("apply_manifest", str(DEMO_MANIFEST), stdout=out)
    assert "warning" not in out.getvalue()
    before = snapshot()
    again = StringIO()
    call_command("apply_manifest", str(DEMO_MANIFEST), stdout=again)
    assert "no changes" in again.getvalue()
    assert snapshot() == before


def test_if_new_applies_on_the_first_start_and_keeps_later_changes():
    """make demo's --if-new: the manifest provisions an empty database; once its tenant exists
    it is not applied again, so a pin changed since (by ingest --agent) is not reverted."""
    first = StringIO()
    call_command("apply_manifest", str(DEMO_MANIFEST), "--if-new", stdout=first)
    assert "Applied" in first.getvalue()
    pin = AgentPin.objects.get(app__slug="research-desk", agent__key="briefing")
    pin.delete()
    again = StringIO()
    call_command("apply_manifest", str(DEMO_MANIFEST), "--if-new", stdout=again)
    assert "already provisioned; not applied again" in again.getvalue()
    assert not AgentPin.objects.filter(app__slug="research-desk", agent__key="briefing").exists()


def test_the_demo_users_see_different_documents():
    call_command("apply_manifest", str(DEMO_MANIFEST), stdout=StringIO())
    memo = Document.objects.get(key="internal-memo-2026-10")
    report = Document.objects.get(key="beichen-pharma-2026q3")
    assert user_may_read_document(user("analyst"), memo)
    assert not user_may_read_document(user("intern"), memo)
    assert user_may_read_document(user("intern"), report)
    assert authenticate_token("st_demo_analyst_token_0001") == user("analyst")
    assert authenticate_token("st_demo_intern_token_0002") == user("intern")
    pins = {
        p.agent.key: p.version.version for p in AgentPin.objects.select_related("agent", "version")
    }
    assert pins == {"researcher": "1", "briefing": "1"}


def test_the_documented_example_applies_cleanly(tmp_path, monkeypatch):
    """docs/manifest.md's complete example stays a working manifest."""
    monkeypatch.setenv("SPARKTIDE_ROOT_PASSWORD", "root-password-123")
    monkeypatch.setenv("CRM_SIGNING_SECRET", "crm-signing-secret")
    doc = (DEMO_MANIFEST.parents[1] / "docs" / "manifest.md").read_text(encoding="utf-8")
    example = doc.split("## A complete example", 1)[1].split("```yaml\n", 1)[1].split("```", 1)[0]
    path = tmp_path / "example.yaml"
    path.write_text(example, encoding="utf-8")
    call_command("apply_manifest", str(path), stdout=StringIO())
    assert KnowledgeVersion.objects.get(version="2026-09").status == "REVOKED"
    out = StringIO()
    call_command("apply_manifest", str(path), stdout=out)
    assert "no changes" in out.getvalue()


def test_a_manifest_cannot_retire_a_version_an_app_pins(apply, apply_error):
    """The admin's rule (agents/versions.py). An app the file does not name (the file
    leaves it alone) pins the version: before, the manifest retired it with a warning."""
    apply(base_manifest())
    tenant = Tenant.objects.get(key="acme")
    other = factories.make_app(tenant, "desk")
    AgentPin.objects.create(
        app=other,
        agent=Agent.objects.get(tenant=tenant, key="researcher"),
        version=AgentVersion.objects.get(agent__key="researcher", version="1"),
    )
    data = base_manifest()
    versions = tenant0(data)["agents"][1]["versions"]
    versions[0]["status"] = "RETIRED"
    versions.append({**copy.deepcopy(versions[0]), "version": "2", "status": "PUBLISHED"})
    tenant0(data)["apps"][0]["agents"] = {"researcher": "2"}
    before = snapshot()

    message = apply_error(data)

    assert "tenants[0].agents[1].versions[0].status" in message
    assert "pinned by desk; pin another version first" in message
    assert snapshot() == before


def test_a_manifest_may_retire_a_version_and_pin_its_successor_at_once(apply):
    apply(base_manifest())
    data = base_manifest()
    versions = tenant0(data)["agents"][1]["versions"]
    versions[0]["status"] = "RETIRED"
    versions.append({**copy.deepcopy(versions[0]), "version": "2", "status": "PUBLISHED"})
    tenant0(data)["apps"][0]["agents"] = {"researcher": "2"}

    apply(data)

    statuses = dict(
        AgentVersion.objects.filter(agent__key="researcher").values_list("version", "status")
    )
    assert statuses == {"1": "RETIRED", "2": "PUBLISHED"}


# ---------------------------------------------------------------- REMOTE allow-list


@pytest.mark.parametrize(
    ("endpoint", "allowed"),
    [
        ("http://127.0.0.1:9100/retrieve", ["127.0.0.1:9100"]),
        ("https://crm.example/retrieve", ["CRM.Example"]),
        ("https://crm.example/retrieve", ["crm.example:443"]),
        ("http://crm.example/retrieve", [" crm.example:80 "]),
    ],
)
def test_an_endpoint_the_remote_client_accepts_is_applied_without_a_warning(
    apply, settings, endpoint, allowed
):
    """The manifest's warning is the REMOTE client's own allow-list rule
    (knowledge.remote.endpoint_url): an entry in capitals or with the scheme's default
    port admits the host there, so the manifest must not warn that calls will be refused."""
    settings.SPARKTIDE_REMOTE_ALLOWED_HOSTS = allowed
    data = base_manifest()
    tenant0(data)["knowledge"][1]["versions"][0]["endpoint"] = endpoint
    out = apply(data)
    assert "warning" not in out
    assert KnowledgeVersion.objects.get(knowledge__key="crm").endpoint == endpoint


def test_an_endpoint_the_remote_client_refuses_is_applied_with_a_warning(apply, settings):
    """A host not on the allow-list is still written (an operator may add it later), with
    the warning naming the key path and the host and port the client would refuse."""
    settings.SPARKTIDE_REMOTE_ALLOWED_HOSTS = ["crm.example:8443"]
    data = base_manifest()
    tenant0(data)["knowledge"][1]["versions"][0]["endpoint"] = "https://crm.example/retrieve"
    out = apply(data)
    assert "warning" in out
    assert "tenants[0].knowledge[1].versions[0].endpoint" in out
    assert "crm.example:443" in out and "SPARKTIDE_REMOTE_ALLOWED_HOSTS" in out
