"""Reading a manifest: YAML → typed specs (``parse_manifest``), checking shapes only
(no database): unknown keys, types, choices, limits, duplicates. Each rule a value must
meet beyond its shape is asked of its domain's own validator (the model config's, the
vocabulary's, the REMOTE deadline's bound)."""

from pathlib import Path
from typing import Any

from agents.models import AgentVersion
from agents.providers import ModelConfigError, validate_model_config
from knowledge.models import (
    MAX_REMOTE_TIMEOUT_SECONDS,
    Knowledge,
    KnowledgeVersion,
    remote_timeout_refusal,
)
from provisioning.errors import ManifestError
from provisioning.files import inline_files
from provisioning.shapes import (
    MAX_MANIFEST_BYTES,
    SLUG,
    check_json_value,
    key_path,
    kind_of,
    load_yaml,
    read_bool,
    read_choice,
    read_date_or_null,
    read_datetime_or_null,
    read_decimal,
    read_http_url,
    read_int,
    read_list,
    read_mapping,
    read_number,
    read_slug,
    read_str,
    read_username,
    read_version_label,
    refuse_duplicates,
    secret_from_env,
)
from provisioning.specs import (
    MIN_FIXED_TOKEN_LENGTH,
    AgentSpec,
    AgentVersionSpec,
    AppSpec,
    DocumentSpec,
    FactSpec,
    KnowledgeSpec,
    KnowledgeVersionSpec,
    LeaseSpec,
    Manifest,
    MemberSpec,
    PinSpec,
    ReaderSpec,
    StaffSpec,
    TenantSpec,
    UserSpec,
)
from provisioning.vocabulary import parse_vocabulary
from tenancy.models import (
    TOKEN_PREFIX,
    App,
)

# --------------------------------------------------------------------------- parse


def parse_manifest(data: Any) -> Manifest:
    if data is None:
        raise ManifestError("", "the manifest is empty")
    read_mapping(data, "", optional=("staff", "tenants"))
    staff = tuple(
        _parse_staff(item, key_path("staff", i))
        for i, item in enumerate(read_list(data.get("staff"), "staff"))
    )
    refuse_duplicates(((s.path + ".username", s.username) for s in staff), "staff username")
    tenants = tuple(
        _parse_tenant(item, key_path("tenants", i))
        for i, item in enumerate(read_list(data.get("tenants"), "tenants"))
    )
    refuse_duplicates(((t.path + ".key", t.key) for t in tenants), "tenant key")
    refuse_duplicates(
        ((u.path + ".username", u.username) for t in tenants for u in t.users), "username"
    )
    refuse_duplicates(((a.path + ".slug", a.slug) for t in tenants for a in t.apps), "app slug")
    return Manifest(staff=staff, tenants=tenants)


def _parse_staff(item: Any, path: str) -> StaffSpec:
    read_mapping(
        item, path, required=("username",), optional=("password", "passwordEnv", "superuser")
    )
    if ("password" in item) == ("passwordEnv" in item):
        raise ManifestError(
            key_path(path, "password"), "give exactly one of password or passwordEnv"
        )
    if "password" in item:
        password = read_str(item["password"], key_path(path, "password"))
    else:
        password = secret_from_env(item["passwordEnv"], key_path(path, "passwordEnv"))
    return StaffSpec(
        path=path,
        username=read_username(item["username"], key_path(path, "username")),
        password=password,
        superuser=read_bool(item.get("superuser", True), key_path(path, "superuser")),
    )


def _parse_tenant(item: Any, path: str) -> TenantSpec:
    read_mapping(
        item,
        path,
        required=("key", "name"),
        optional=("users", "knowledge", "agents", "apps", "vocabulary"),
    )
    users = tuple(
        _parse_user(u, key_path(key_path(path, "users"), i))
        for i, u in enumerate(read_list(item.get("users"), key_path(path, "users")))
    )
    knowledge = tuple(
        _parse_knowledge(k, key_path(key_path(path, "knowledge"), i))
        for i, k in enumerate(read_list(item.get("knowledge"), key_path(path, "knowledge")))
    )
    refuse_duplicates(((k.path + ".key", k.key) for k in knowledge), "knowledge key")
    agents = tuple(
        _parse_agent(a, key_path(key_path(path, "agents"), i))
        for i, a in enumerate(read_list(item.get("agents"), key_path(path, "agents")))
    )
    refuse_duplicates(((a.path + ".key", a.key) for a in agents), "agent key")
    _refuse_sub_agent_cycles(agents)
    apps = tuple(
        _parse_app(a, key_path(key_path(path, "apps"), i))
        for i, a in enumerate(read_list(item.get("apps"), key_path(path, "apps")))
    )
    return TenantSpec(
        path=path,
        key=read_slug(item["key"], key_path(path, "key")),
        name=read_str(item["name"], key_path(path, "name"), max_length=200),
        users=users,
        knowledge=knowledge,
        agents=agents,
        apps=apps,
        vocabulary=parse_vocabulary(item.get("vocabulary"), key_path(path, "vocabulary")),
    )


def _refuse_sub_agent_cycles(agents: tuple[AgentSpec, ...]) -> None:
    """An agent may not reach itself through subAgents (any of its versions):
    a cycle would only end at the engine's depth limit, as a failed sub-call."""
    edges: dict[str, list[tuple[str, str]]] = {}
    for agent in agents:
        for version in agent.versions:
            for i, key in enumerate(version.sub_agents):
                edges.setdefault(agent.key, []).append((key, f"{version.path}.subAgents[{i}]"))
    for start in edges:
        # Depth-first from each agent, iteratively; ``trail`` is the chain so far.
        stack = [(start, [start])]
        visited: set[str] = set()
        while stack:
            node, trail = stack.pop()
            for key, where in edges.get(node, ()):
                if key == start:
                    chain = " → ".join([*trail, key])
                    raise ManifestError(where, f"sub-agents form a cycle: {chain}")
                if key not in visited:
                    visited.add(key)
                    stack.append((key, [*trail, key]))


def _parse_user(item: Any, path: str) -> UserSpec:
    read_mapping(item, path, required=("username",), optional=("token",))
    token = None
    if item.get("token") is not None:
        token = read_str(item["token"], key_path(path, "token"), max_length=200)
        if not token.startswith(TOKEN_PREFIX) or len(token) < MIN_FIXED_TOKEN_LENGTH:
            raise ManifestError(
                key_path(path, "token"),
                f"a fixed token must start with {TOKEN_PREFIX!r} and be at least "
                f"{MIN_FIXED_TOKEN_LENGTH} characters long",
            )
    return UserSpec(
        path=path, username=read_username(item["username"], key_path(path, "username")), token=token
    )


def _parse_knowledge(item: Any, path: str) -> KnowledgeSpec:
    read_mapping(item, path, required=("key", "type"), optional=("name", "versions", "vocabulary"))
    type_ = read_choice(item["type"], key_path(path, "type"), Knowledge.Type.values)
    versions = tuple(
        _parse_knowledge_version(v, key_path(key_path(path, "versions"), i), type_)
        for i, v in enumerate(read_list(item.get("versions"), key_path(path, "versions")))
    )
    refuse_duplicates(((v.path + ".version", v.version) for v in versions), "version")
    return KnowledgeSpec(
        path=path,
        key=read_slug(item["key"], key_path(path, "key")),
        name=read_str(item.get("name", ""), key_path(path, "name"), max_length=200, empty=True),
        type=type_,
        versions=versions,
        vocabulary=parse_vocabulary(item.get("vocabulary"), key_path(path, "vocabulary")),
    )


def _parse_knowledge_version(item: Any, path: str, type_: str) -> KnowledgeVersionSpec:
    common = ("version", "status")
    if type_ == Knowledge.Type.REMOTE:
        read_mapping(
            item,
            path,
            required=(*common, "endpoint"),
            optional=("secret", "secretEnv", "timeoutSeconds"),
        )
        if ("secret" in item) == ("secretEnv" in item):
            raise ManifestError(key_path(path, "secret"), "give exactly one of secret or secretEnv")
        if "secret" in item:
            secret_key, secret = (
                "secret",
                read_str(item["secret"], key_path(path, "secret"), max_length=200),
            )
        else:
            secret_key = "secretEnv"
            secret = secret_from_env(item["secretEnv"], key_path(path, "secretEnv"))
            if len(secret) > 200:
                raise ManifestError(
                    key_path(path, "secretEnv"), "the secret is longer than 200 characters"
                )
        timeout = read_number(
            item.get("timeoutSeconds", MAX_REMOTE_TIMEOUT_SECONDS), key_path(path, "timeoutSeconds")
        )
        refusal = remote_timeout_refusal(timeout)  # the model's rule (knowledge/models/versions.py)
        if refusal is not None:
            raise ManifestError(key_path(path, "timeoutSeconds"), refusal)
        return KnowledgeVersionSpec(
            path=path,
            version=read_version_label(item["version"], key_path(path, "version")),
            status=read_choice(
                item["status"], key_path(path, "status"), KnowledgeVersion.Status.values
            ),
            documents=(),
            endpoint=read_http_url(item["endpoint"], key_path(path, "endpoint")),
            secret=secret,
            secret_key=secret_key,
            timeout_seconds=timeout,
        )
    read_mapping(item, path, required=common, optional=("documents",))
    documents = tuple(
        _parse_document(d, key_path(key_path(path, "documents"), i))
        for i, d in enumerate(read_list(item.get("documents"), key_path(path, "documents")))
    )
    refuse_duplicates(((d.path + ".key", d.key) for d in documents), "document key")
    return KnowledgeVersionSpec(
        path=path,
        version=read_version_label(item["version"], key_path(path, "version")),
        status=read_choice(
            item["status"], key_path(path, "status"), KnowledgeVersion.Status.values
        ),
        documents=documents,
    )


def _parse_document(item: Any, path: str) -> DocumentSpec:
    read_mapping(
        item,
        path,
        required=("key", "title", "pages"),
        optional=("sourceVersion", "readers", "facts"),
    )
    pages_path = key_path(path, "pages")
    pages = read_list(item["pages"], pages_path, default_empty=False)
    if not pages:
        raise ManifestError(pages_path, "a document needs at least one page")
    for i, page in enumerate(pages):
        read_str(page, key_path(pages_path, i), empty=True)
    readers = None
    if "readers" in item:
        readers_path = key_path(path, "readers")
        readers = tuple(
            ReaderSpec(
                path=key_path(readers_path, i), username=read_username(r, key_path(readers_path, i))
            )
            for i, r in enumerate(read_list(item["readers"], readers_path))
        )
        refuse_duplicates(((r.path, r.username) for r in readers), "reader")
    facts = tuple(
        _parse_fact(f, key_path(key_path(path, "facts"), i))
        for i, f in enumerate(read_list(item.get("facts"), key_path(path, "facts")))
    )
    refuse_duplicates(((f.path + ".key", f.key) for f in facts), "fact key")
    source_version = item.get("sourceVersion") or ""
    if isinstance(source_version, int) and not isinstance(source_version, bool):
        source_version = str(source_version)
    return DocumentSpec(
        path=path,
        key=read_str(item["key"], key_path(path, "key"), max_length=128),
        title=read_str(item["title"], key_path(path, "title"), max_length=500),
        source_version=read_str(
            source_version, key_path(path, "sourceVersion"), max_length=128, empty=True
        ),
        pages=tuple(pages),
        readers=readers,
        facts=facts,
    )


def _parse_fact(item: Any, path: str) -> FactSpec:
    read_mapping(item, path, required=("key", "value"), optional=("unit", "asOf", "label", "page"))
    page = item.get("page")
    if page is not None and (isinstance(page, bool) or not isinstance(page, int) or page < 1):
        raise ManifestError(
            key_path(path, "page"), f"must be a page number (1, 2, …), got {page!r}"
        )
    return FactSpec(
        page=page,
        path=path,
        key=read_str(item["key"], key_path(path, "key"), max_length=128),
        value=read_decimal(item["value"], key_path(path, "value")),
        unit=read_str(item.get("unit", ""), key_path(path, "unit"), max_length=32, empty=True),
        as_of=read_date_or_null(item.get("asOf"), key_path(path, "asOf")),
        label=read_str(item.get("label", ""), key_path(path, "label"), max_length=200, empty=True),
    )


def _parse_agent(item: Any, path: str) -> AgentSpec:
    read_mapping(item, path, required=("key",), optional=("name", "versions"))
    versions = tuple(
        _parse_agent_version(v, key_path(key_path(path, "versions"), i))
        for i, v in enumerate(read_list(item.get("versions"), key_path(path, "versions")))
    )
    refuse_duplicates(((v.path + ".version", v.version) for v in versions), "version")
    return AgentSpec(
        path=path,
        key=read_slug(item["key"], key_path(path, "key")),
        name=read_str(item.get("name", ""), key_path(path, "name"), max_length=200, empty=True),
        versions=versions,
    )


def _parse_agent_version(item: Any, path: str) -> AgentVersionSpec:
    read_mapping(
        item,
        path,
        required=("version", "status", "model"),
        optional=("instructions", "allowedKnowledge", "subAgents", "maxSteps", "routing"),
    )
    allowed_path = key_path(path, "allowedKnowledge")
    allowed = tuple(
        _knowledge_label(label, key_path(allowed_path, i))
        for i, label in enumerate(read_list(item.get("allowedKnowledge"), allowed_path))
    )
    refuse_duplicates(
        ((key_path(allowed_path, i), label) for i, label in enumerate(allowed)), "knowledge version"
    )
    sub_path = key_path(path, "subAgents")
    sub_agents = tuple(
        read_slug(key, key_path(sub_path, i))
        for i, key in enumerate(read_list(item.get("subAgents"), sub_path))
    )
    refuse_duplicates(
        ((key_path(sub_path, i), key) for i, key in enumerate(sub_agents)), "sub-agent"
    )
    return AgentVersionSpec(
        path=path,
        version=read_version_label(item["version"], key_path(path, "version")),
        status=read_choice(item["status"], key_path(path, "status"), AgentVersion.Status.values),
        instructions=read_str(
            item.get("instructions", ""), key_path(path, "instructions"), empty=True
        ),
        model=_parse_model(item["model"], key_path(path, "model")),
        allowed_knowledge=allowed,
        sub_agents=sub_agents,
        max_steps=read_int(
            item.get("maxSteps", 20), key_path(path, "maxSteps"), minimum=1, maximum=1000
        ),
        routing=_parse_routing(item.get("routing"), key_path(path, "routing"), allowed),
    )


def _knowledge_label(value: Any, path: str) -> str:
    text = read_str(value, path, max_length=200)
    key, at, version = text.partition("@")
    if not at or not key or not version or not SLUG.match(key):
        raise ManifestError(path, f"must be 'knowledge-key@version', got {text!r}")
    return text


def _parse_model(value: Any, path: str) -> dict[str, Any]:
    # The providers' own validator: the manifest accepts exactly what an agent
    # call can run (one home for the model-config rules).
    try:
        validate_model_config(value)
    except ModelConfigError as exc:
        raise ManifestError(_at_path(path, exc.path), exc.problem)
    check_json_value(value, path)
    model: dict[str, Any] = value
    return model


def _at_path(path: str, relative: str) -> str:
    if not relative:
        return path
    return f"{path}{relative}" if relative.startswith("[") else f"{path}.{relative}"


def _parse_routing(value: Any, path: str, allowed: tuple[str, ...]) -> list[Any]:
    rules = read_list(value, path)
    for i, rule in enumerate(rules):
        rule_path = key_path(path, i)
        read_mapping(rule, rule_path, required=("match", "knowledge"))
        read_str(rule["match"], key_path(rule_path, "match"))
        labels_path = key_path(rule_path, "knowledge")
        for j, label in enumerate(read_list(rule["knowledge"], labels_path, default_empty=False)):
            _knowledge_label(label, key_path(labels_path, j))
            if label not in allowed:
                raise ManifestError(
                    key_path(labels_path, j), f"{label!r} is not in allowedKnowledge"
                )
    return rules


def _parse_app(item: Any, path: str) -> AppSpec:
    read_mapping(
        item,
        path,
        required=("slug", "name"),
        optional=(
            "status",
            "retentionDays",
            "securityPolicyEpoch",
            "knowledgeAccessEpoch",
            "members",
            "leases",
            "agents",
        ),
    )
    members_path = key_path(path, "members")
    members = []
    for i, member in enumerate(read_list(item.get("members"), members_path)):
        member_path = key_path(members_path, i)
        read_mapping(member, member_path, required=("user",), optional=("history",))
        members.append(
            MemberSpec(
                path=member_path,
                username=read_username(member["user"], key_path(member_path, "user")),
                history=read_bool(member.get("history", False), key_path(member_path, "history")),
            )
        )
    refuse_duplicates(((m.path + ".user", m.username) for m in members), "member")
    leases_path = key_path(path, "leases")
    leases = []
    for i, lease in enumerate(read_list(item.get("leases"), leases_path)):
        lease_path = key_path(leases_path, i)
        read_mapping(lease, lease_path, required=("knowledge",), optional=("expiresAt", "revoked"))
        leases.append(
            LeaseSpec(
                path=lease_path,
                knowledge=_knowledge_label(lease["knowledge"], key_path(lease_path, "knowledge")),
                expires_at=read_datetime_or_null(
                    lease.get("expiresAt"), key_path(lease_path, "expiresAt")
                ),
                revoked=(
                    read_bool(lease["revoked"], key_path(lease_path, "revoked"))
                    if "revoked" in lease
                    else None
                ),
            )
        )
    refuse_duplicates(((lease.path + ".knowledge", lease.knowledge) for lease in leases), "lease")
    pins_path = key_path(path, "agents")
    pins_value = item.get("agents") or {}
    if not isinstance(pins_value, dict):
        raise ManifestError(
            pins_path, f"must be a mapping of agent key → version, got {kind_of(pins_value)}"
        )
    pins = tuple(
        PinSpec(
            path=key_path(pins_path, str(key)),
            agent=read_slug(key, key_path(pins_path, str(key))),
            version=read_version_label(version, key_path(pins_path, str(key))),
        )
        for key, version in pins_value.items()
    )
    epochs = {}
    for key in ("securityPolicyEpoch", "knowledgeAccessEpoch"):
        if item.get(key) is not None:
            epochs[key] = read_int(item[key], key_path(path, key), minimum=1, maximum=2**31 - 1)
    return AppSpec(
        path=path,
        slug=read_slug(item["slug"], key_path(path, "slug")),
        name=read_str(item["name"], key_path(path, "name"), max_length=200),
        status=read_choice(
            item.get("status", App.Status.ACTIVE), key_path(path, "status"), App.Status.values
        ),
        retention_days=read_int(
            item.get("retentionDays", 30), key_path(path, "retentionDays"), minimum=1, maximum=36500
        ),
        security_policy_epoch=epochs.get("securityPolicyEpoch"),
        knowledge_access_epoch=epochs.get("knowledgeAccessEpoch"),
        members=tuple(members),
        leases=tuple(leases),
        pins=pins,
    )


def read_manifest(path: Path) -> Manifest:
    try:
        if path.stat().st_size > MAX_MANIFEST_BYTES:
            raise ManifestError("", f"the file is larger than {MAX_MANIFEST_BYTES} bytes")
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise ManifestError("", f"cannot read the file: {exc.strerror or exc}")
    except UnicodeDecodeError:
        raise ManifestError("", "the file is not UTF-8 text")
    return parse_manifest(inline_files(load_yaml(text), path.parent))
