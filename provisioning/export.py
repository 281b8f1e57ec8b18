"""``manage.py export_manifest``: the current state written back as a manifest that
``apply_manifest`` accepts (docs/manifest.md "Export").

Everything the manifest can say is exported — tenants, users, knowledge with
every version, its documents (pages, readers, facts), agents with every version,
apps with members, history permission, leases, pins and epochs — except what is
stored only as a hash: API tokens and staff passwords are not written (users
keep the tokens they have; staff are left out). A REMOTE version's signing
secret is written as ``secretEnv: NAME`` (the variable ``apply_manifest`` will
read) unless ``include_secrets`` is set.

Pages are not stored one by one: the document's text is its pages joined by a
blank line, and each chunk knows its page. Each page boundary is put at the
separator that lies between the last chunk of one page and the first chunk of
the next, so the exported pages give back the same text, page count and chunk
pages (what ``apply_manifest`` checks before it accepts a published version).
"""

import re
from decimal import Decimal
from typing import Any

from django.contrib.contenttypes.models import ContentType
from django.db.models import Model
from guardian.models import UserObjectPermission

from agents.models import Agent, AgentPin
from knowledge.models import Document, Knowledge, KnowledgeVersion
from knowledge.text import PAGE_SEPARATOR
from tenancy.models import App, Tenant


def export_manifest(*, include_secrets: bool = False) -> dict[str, Any]:
    return {
        "tenants": [_tenant(tenant, include_secrets) for tenant in Tenant.objects.order_by("key")]
    }


def secret_env_name(version: KnowledgeVersion) -> str:
    raw = f"SPARKTIDE_SECRET_{version.knowledge.key}_{version.version}"
    return re.sub(r"[^A-Z0-9_]", "_", raw.upper())


def _holders(obj: Model, codename: str) -> set[int]:
    return set(
        UserObjectPermission.objects.filter(
            content_type=ContentType.objects.get_for_model(type(obj)),
            object_pk=str(obj.pk),
            permission__codename=codename,
        ).values_list("user_id", flat=True)
    )


def _tenant(tenant: Tenant, include_secrets: bool) -> dict[str, Any]:
    users = {
        tu.user_id: tu.user.get_username()
        for tu in tenant.users.select_related("user").order_by("user__username")
    }
    data: dict[str, Any] = {"key": tenant.key, "name": tenant.name}
    data["users"] = [{"username": name} for name in users.values()]
    data["knowledge"] = [
        _knowledge(k, users, include_secrets) for k in tenant.knowledge.order_by("key")
    ]
    data["agents"] = [_agent(a) for a in tenant.agents.order_by("key")]
    data["apps"] = [_app(app, users) for app in tenant.apps.order_by("slug")]
    return data


def _knowledge(
    knowledge: Knowledge, users: dict[int, str], include_secrets: bool
) -> dict[str, Any]:
    data: dict[str, Any] = {"key": knowledge.key, "type": knowledge.type}
    if knowledge.name:
        data["name"] = knowledge.name
    data["versions"] = []
    for version in knowledge.versions.order_by("created_at", "pk"):
        item: dict[str, Any] = {"version": version.version, "status": version.status}
        if knowledge.type == Knowledge.Type.REMOTE:
            item["endpoint"] = version.endpoint
            if include_secrets:
                item["secret"] = version.secret
            else:
                item["secretEnv"] = secret_env_name(version)
            item["timeoutSeconds"] = version.timeout_seconds
        else:
            item["documents"] = [_document(d, users) for d in version.documents.order_by("pk")]
        data["versions"].append(item)
    return data


def _document(document: Document, users: dict[int, str]) -> dict[str, Any]:
    data: dict[str, Any] = {"key": document.key, "title": document.title}
    if document.source_version:
        data["sourceVersion"] = document.source_version
    if document.restricted:
        readers = _holders(document, "read_document")
        data["readers"] = [name for user_id, name in users.items() if user_id in readers]
    data["pages"] = document_pages(document)
    facts = []
    for fact in document.facts.order_by("pk"):
        item: dict[str, Any] = {"key": fact.key, "value": _number(fact.value)}
        if fact.unit:
            item["unit"] = fact.unit
        if fact.as_of:
            item["asOf"] = fact.as_of.isoformat()
        if fact.label:
            item["label"] = fact.label
        facts.append(item)
    if facts:
        data["facts"] = facts
    return data


def _number(value: Decimal) -> str:
    """A decimal as a string: exact (the manifest parses strings as decimals)."""
    text = format(value.normalize(), "f")
    return text


def document_pages(document: Document) -> list[str]:
    """The pages a document was ingested from (see the module docstring)."""
    text, count = document.text, document.page_count
    if count <= 1:
        return [text]
    # Code point offsets of the chunks, by page (chunks store UTF-16 offsets).
    to_cp = _utf16_to_code_points(text)
    first: dict[int, int] = {}
    last: dict[int, int] = {}
    for page, start, end in document.chunks.order_by("ordinal").values_list("page", "start", "end"):
        first.setdefault(page, to_cp[start])
        last[page] = to_cp[end]
    boundaries = []  # the index of each separator, in order
    position = 0
    for page in range(1, count):
        low = max([position, *[last[p] for p in last if p <= page]])
        cut = text.find(PAGE_SEPARATOR, low)
        following = [first[p] for p in first if p > page]
        if cut < 0 or (following and cut > min(following)):
            cut = text.find(PAGE_SEPARATOR, position)  # best effort: no chunk to go by
        boundaries.append(cut)
        position = cut + len(PAGE_SEPARATOR)
    pages, start = [], 0
    for cut in boundaries:
        pages.append(text[start:cut])
        start = cut + len(PAGE_SEPARATOR)
    pages.append(text[start:])
    return pages


def _utf16_to_code_points(text: str) -> dict[int, int]:
    mapping, units = {0: 0}, 0
    for index, char in enumerate(text, start=1):
        units += 2 if ord(char) > 0xFFFF else 1
        mapping[units] = index
    return mapping


def _agent(agent: Agent) -> dict[str, Any]:
    data: dict[str, Any] = {"key": agent.key}
    if agent.name:
        data["name"] = agent.name
    data["versions"] = []
    for version in agent.versions.order_by("created_at", "pk"):
        item: dict[str, Any] = {"version": version.version, "status": version.status}
        if version.instructions:
            item["instructions"] = version.instructions
        item["model"] = version.model
        allowed = version.allowed_knowledge.select_related("knowledge").order_by("pk")
        item["allowedKnowledge"] = [v.label for v in allowed]
        item["subAgents"] = [a.key for a in version.sub_agents.order_by("key")]
        item["maxSteps"] = version.max_steps
        if version.routing:
            item["routing"] = version.routing
        data["versions"].append(item)
    return data


def _app(app: App, users: dict[int, str]) -> dict[str, Any]:
    history = _holders(app, "view_run_history")
    data: dict[str, Any] = {
        "slug": app.slug,
        "name": app.name,
        "status": app.status,
        "retentionDays": app.retention_days,
        "securityPolicyEpoch": app.security_policy_epoch,
        "knowledgeAccessEpoch": app.knowledge_access_epoch,
    }
    members = app.memberships.select_related("user").order_by("user__username")
    data["members"] = [
        {"user": m.user.get_username(), "history": m.user_id in history} for m in members
    ]
    leases = []
    for lease in app.leases.select_related("version__knowledge").order_by("pk"):
        item: dict[str, Any] = {
            "knowledge": lease.version.label,
            "expiresAt": lease.expires_at.isoformat() if lease.expires_at else None,
        }
        if lease.revoked_at:
            item["revoked"] = True
        leases.append(item)
    data["leases"] = leases
    pins = AgentPin.objects.filter(app=app).select_related("agent", "version")
    data["agents"] = {pin.agent.key: pin.version.version for pin in pins.order_by("agent__key")}
    return data
