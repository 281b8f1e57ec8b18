"""The manifest: one YAML file that provisions tenants, users, knowledge, agents and apps.

Format: docs/manifest.md (and the Manifest section of API.md). Two steps:

* ``parse_manifest`` turns YAML into typed specs, checking shapes only (no
  database): unknown keys, types, choices, limits, duplicates.
* ``apply_manifest`` makes the database match the specs in one transaction.
  Cross-references (users, ``key@version`` labels, agent keys) are resolved
  against the database as it is being written, so they may name rows the file
  creates or rows that already exist.

Rules the apply step implements:

* Entities the file names are created or updated; entities it does not name are
  left alone. Inside a declared app or document, the permission lists (members,
  history, readers, leases, pins) are authoritative: what the file omits is
  taken away.
* The content of a non-DRAFT knowledge or agent version is never rewritten:
  if the file differs from what is stored, that is an error naming the key.
  Statuses and permissions are applied as declared.
* Idempotent: nothing is written unless it differs, and every write is counted
  as a change, so a second run reports none.
* Every error is a ``ManifestError`` carrying the path of the offending key
  (``tenants[0].knowledge[1].versions[0].documents[2].pages``) and why; the
  caller's transaction then rolls everything back.
"""

import os
import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from datetime import UTC, date, datetime, time
from decimal import Decimal, InvalidOperation
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import yaml
from django.conf import settings
from django.contrib.auth import get_user_model
from django.contrib.auth.models import User
from django.contrib.auth.password_validation import validate_password
from django.contrib.auth.validators import UnicodeUsernameValidator
from django.contrib.contenttypes.models import ContentType
from django.core.exceptions import ValidationError
from django.db import transaction
from django.db.models import Model
from django.utils import timezone
from guardian.models import GroupObjectPermission, UserObjectPermission
from guardian.shortcuts import assign_perm

from agents.models import Agent, AgentPin, AgentVersion
from agents.providers import ModelConfigError, validate_model_config
from agents.versions import PinnedVersionError, refuse_retiring_pinned
from foundation.text_boundary import UnstorableText, refuse_unstorable
from knowledge.ingest import FactInput, FactNotStated, ingest_document
from knowledge.models import Document, Knowledge, KnowledgeVersion, Lease
from knowledge.text import PAGE_SEPARATOR, utf16_len
from provisioning.errors import ManifestError
from provisioning.files import inline_files
from provisioning.vocabulary import apply_vocabulary, parse_vocabulary
from tenancy.models import (
    TOKEN_PREFIX,
    ApiToken,
    App,
    Membership,
    Tenant,
    TenantUser,
    hash_token,
)

READ_DOCUMENT = "knowledge.read_document"
VIEW_RUN_HISTORY = "tenancy.view_run_history"
MAX_TIMEOUT_SECONDS = 15
MIN_FIXED_TOKEN_LENGTH = 16
PUBLISHED_CONTENT_MESSAGE = "published version content cannot change; publish a new version"

_SLUG = re.compile(r"^[-a-zA-Z0-9_]+$")
_ENV_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
_username_validator = UnicodeUsernameValidator()


# --------------------------------------------------------------------------- specs


@dataclass(frozen=True)
class StaffSpec:
    path: str
    username: str
    password: str
    superuser: bool


@dataclass(frozen=True)
class UserSpec:
    path: str
    username: str
    token: str | None


@dataclass(frozen=True)
class FactSpec:
    path: str
    key: str
    value: Decimal
    unit: str
    as_of: date | None
    label: str = ""
    page: int | None = None  # 1-based page that states it (a SparkTide extension)


@dataclass(frozen=True)
class ReaderSpec:
    path: str
    username: str


@dataclass(frozen=True)
class DocumentSpec:
    path: str
    key: str
    title: str
    source_version: str
    pages: tuple[str, ...]
    readers: tuple[ReaderSpec, ...] | None  # None: every user of the tenant
    facts: tuple[FactSpec, ...]


@dataclass(frozen=True)
class KnowledgeVersionSpec:
    path: str
    version: str
    status: str
    documents: tuple[DocumentSpec, ...]
    endpoint: str = ""
    secret: str = ""
    secret_key: str = "secret"  # which manifest key carried the secret (secret | secretEnv)
    timeout_seconds: float = float(MAX_TIMEOUT_SECONDS)


@dataclass(frozen=True)
class KnowledgeSpec:
    path: str
    key: str
    name: str
    type: str
    versions: tuple[KnowledgeVersionSpec, ...]
    vocabulary: dict[str, list[str]] | None = None


@dataclass(frozen=True)
class AgentVersionSpec:
    path: str
    version: str
    status: str
    instructions: str
    model: dict[str, Any]
    allowed_knowledge: tuple[str, ...]
    sub_agents: tuple[str, ...]
    max_steps: int
    routing: list[Any]


@dataclass(frozen=True)
class AgentSpec:
    path: str
    key: str
    name: str
    versions: tuple[AgentVersionSpec, ...]


@dataclass(frozen=True)
class MemberSpec:
    path: str
    username: str
    history: bool


@dataclass(frozen=True)
class LeaseSpec:
    path: str
    knowledge: str
    expires_at: datetime | None
    revoked: bool | None  # None: leave the stored revocation as it is


@dataclass(frozen=True)
class PinSpec:
    path: str
    agent: str
    version: str


@dataclass(frozen=True)
class AppSpec:
    path: str
    slug: str
    name: str
    status: str
    retention_days: int
    security_policy_epoch: int | None
    knowledge_access_epoch: int | None
    members: tuple[MemberSpec, ...]
    leases: tuple[LeaseSpec, ...]
    pins: tuple[PinSpec, ...]


@dataclass(frozen=True)
class TenantSpec:
    path: str
    key: str
    name: str
    users: tuple[UserSpec, ...]
    knowledge: tuple[KnowledgeSpec, ...]
    agents: tuple[AgentSpec, ...]
    apps: tuple[AppSpec, ...]
    vocabulary: dict[str, list[str]] | None = None


@dataclass(frozen=True)
class Manifest:
    staff: tuple[StaffSpec, ...]
    tenants: tuple[TenantSpec, ...]


@dataclass
class ApplyResult:
    changes: list[str] = field(default_factory=list)
    # (tenant/username, raw token) of tokens generated by this run; shown once.
    tokens: list[tuple[str, str]] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    dry_run: bool = False


# --------------------------------------------------------------------------- YAML


# Parser limits: a manifest is hand-written provisioning data, so none of these
# is near an honest file, and each keeps a hostile one from costing time or stack.
MAX_MANIFEST_BYTES = 8 * 1024 * 1024
MAX_YAML_DEPTH = 32
_TIMESTAMP_TAG = "tag:yaml.org,2002:timestamp"


class _StrictLoader(yaml.SafeLoader):
    """SafeLoader with limits.

    * duplicate mapping keys are refused (PyYAML keeps the last one silently);
    * aliases (``*name``, ``<<: *name``) are refused: a billion-laughs file
      would otherwise be expanded by every walk over it and stored expanded;
    * nesting deeper than MAX_YAML_DEPTH is refused while composing (PyYAML's
      composer recurses once per level), naming the key path;
    * timestamps stay strings, so an impossible date (``2026-02-30``) is a
      ManifestError at its key path instead of a ValueError inside PyYAML.
    """

    def __init__(self, stream: str | bytes) -> None:
        super().__init__(stream)
        self._path: list[str | int] = []

    def compose_node(self, parent: yaml.Node | None, index: Any) -> yaml.Node | None:
        if self.check_event(yaml.AliasEvent):
            event = self.peek_event()  # type: ignore[no-untyped-call]  # untyped in types-PyYAML
            raise ManifestError(
                _yaml_path(self._path, index),
                f"YAML aliases (*{event.anchor}) are not allowed, at line "
                f"{event.start_mark.line + 1}",
            )
        self._path.append(index)
        try:
            if len(self._path) > MAX_YAML_DEPTH:
                raise ManifestError(
                    _yaml_path(self._path[:-1], index),
                    f"nests deeper than {MAX_YAML_DEPTH} levels",
                )
            return super().compose_node(parent, index)
        finally:
            self._path.pop()


_StrictLoader.yaml_implicit_resolvers = {
    first: [(tag, regexp) for tag, regexp in resolvers if tag != _TIMESTAMP_TAG]
    for first, resolvers in yaml.SafeLoader.yaml_implicit_resolvers.items()
}


def _yaml_path(stack: list[Any], index: Any = None) -> str:
    # compose_node's index: None for the root, an int in a sequence, the key
    # node in a mapping.
    path = ""
    for item in [*stack[1:], index] if stack else [index]:
        if item is None:
            continue
        if isinstance(item, int):
            path = f"{path}[{item}]"
        else:
            key = getattr(item, "value", item)
            path = f"{path}.{key}" if path else str(key)
    return path


def _construct_mapping(
    loader: _StrictLoader, node: yaml.MappingNode, deep: bool = False
) -> dict[Any, Any]:
    loader.flatten_mapping(node)
    seen: set[Any] = set()
    for key_node, _ in node.value:
        key = loader.construct_object(key_node, deep=True)
        try:
            duplicate = key in seen
        except TypeError:
            raise yaml.constructor.ConstructorError(
                None, None, "a mapping key must be a plain value", key_node.start_mark
            )
        if duplicate:
            raise yaml.constructor.ConstructorError(
                None, None, f"duplicate key {key!r}", key_node.start_mark
            )
        seen.add(key)
    return loader.construct_mapping(node, deep=deep)


_StrictLoader.add_constructor(yaml.resolver.BaseResolver.DEFAULT_MAPPING_TAG, _construct_mapping)
# An explicit !!timestamp stays text too; the field's own parser checks it.
_StrictLoader.add_constructor(  # type: ignore[type-var]  # the stub's bound refuses a SafeLoader method
    _TIMESTAMP_TAG, yaml.SafeLoader.construct_scalar
)


def load_yaml(text: str) -> Any:
    """The YAML document, with every string checked at the storage boundary."""
    if len(text) > MAX_MANIFEST_BYTES:
        raise ManifestError("", f"the manifest is larger than {MAX_MANIFEST_BYTES} bytes")
    try:
        data = yaml.load(text, Loader=_StrictLoader)  # noqa: S506 - a SafeLoader subclass
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None) or getattr(exc, "context_mark", None)
        problem = getattr(exc, "problem", None) or str(exc)
        where = f" at line {mark.line + 1}, column {mark.column + 1}" if mark else ""
        raise ManifestError("", f"invalid YAML{where}: {problem}")
    try:
        # PostgreSQL cannot store NUL or lone surrogates: refused before anything
        # is parsed, let alone applied (foundation/text_boundary.py).
        refuse_unstorable(data)
    except UnstorableText as exc:
        raise ManifestError(exc.path, exc.reason)
    return data


# --------------------------------------------------------------------------- shape checks


def _kind(value: Any) -> str:
    if value is None:
        return "null"
    return {
        bool: "a boolean",
        int: "an integer",
        float: "a number",
        str: "a string",
        list: "a list",
        dict: "a mapping",
    }.get(type(value), type(value).__name__)


def _at(path: str, key: str | int) -> str:
    if isinstance(key, int):
        return f"{path}[{key}]"
    return f"{path}.{key}" if path else key


def _mapping(
    value: Any, path: str, *, required: Iterable[str] = (), optional: Iterable[str] = ()
) -> dict[str, Any]:
    if not isinstance(value, dict):
        raise ManifestError(path, f"must be a mapping, got {_kind(value)}")
    required, optional = tuple(required), tuple(optional)
    allowed = required + optional
    for key in value:
        if key not in allowed:
            raise ManifestError(
                _at(path, str(key)), f"unknown key; expected one of: {', '.join(allowed)}"
            )
    for key in required:
        if key not in value:
            raise ManifestError(_at(path, key), "is required")
    mapping: dict[str, Any] = value
    return mapping


def _list(value: Any, path: str, *, default_empty: bool = True) -> list[Any]:
    if value is None and default_empty:
        return []
    if not isinstance(value, list):
        raise ManifestError(path, f"must be a list, got {_kind(value)}")
    return value


def _str(value: Any, path: str, *, max_length: int | None = None, empty: bool = False) -> str:
    if not isinstance(value, str):
        raise ManifestError(path, f"must be a string, got {_kind(value)}")
    if not empty and not value.strip():
        raise ManifestError(path, "must not be empty")
    if max_length is not None and len(value) > max_length:
        raise ManifestError(path, f"must be at most {max_length} characters long")
    return value


def _slug(value: Any, path: str) -> str:
    text = _str(value, path, max_length=64)
    if not _SLUG.match(text):
        raise ManifestError(path, f"must be a slug (letters, digits, - and _), got {text!r}")
    return text


def _username(value: Any, path: str) -> str:
    text = _str(value, path, max_length=150)
    try:
        _username_validator(text)
    except ValidationError:
        raise ManifestError(path, f"is not a valid username: {text!r}")
    return text


def _version_label(value: Any, path: str) -> str:
    # YAML reads `version: 1` as an integer; accept it, but not a float, whose
    # text would change (2026.10 → "2026.1").
    if isinstance(value, int) and not isinstance(value, bool):
        return str(value)
    text = _str(value, path, max_length=64)
    if "@" in text:
        raise ManifestError(path, "must not contain '@'")
    return text


def _bool(value: Any, path: str) -> bool:
    if not isinstance(value, bool):
        raise ManifestError(path, f"must be true or false, got {_kind(value)}")
    return value


def _int(value: Any, path: str, *, minimum: int, maximum: int) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise ManifestError(path, f"must be an integer, got {_kind(value)}")
    if not minimum <= value <= maximum:
        raise ManifestError(path, f"must be between {minimum} and {maximum}, got {value}")
    return value


def _number(value: Any, path: str) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise ManifestError(path, f"must be a number, got {_kind(value)}")
    return float(value)


def _choice(value: Any, path: str, choices: Iterable[str]) -> str:
    choices = tuple(choices)
    if value not in choices:
        raise ManifestError(path, f"must be one of {', '.join(choices)}, got {value!r}")
    chosen: str = value
    return chosen


def _unique(items: Iterable[tuple[str, str]], what: str) -> None:
    """items: (path, key); a key given twice is an error at its second path."""
    seen: set[str] = set()
    for path, key in items:
        if key in seen:
            raise ManifestError(path, f"duplicate {what} {key!r}")
        seen.add(key)


def _secret_from_env(name: Any, path: str) -> str:
    name = _str(name, path)
    if not _ENV_NAME.match(name):
        raise ManifestError(path, f"must be an environment variable name, got {name!r}")
    value = os.environ.get(name)
    if not value:
        raise ManifestError(path, f"environment variable {name} is not set")
    return value


def _json_value(value: Any, path: str) -> None:
    """Model configs are stored as JSON: refuse YAML-only values (dates, sets…)."""
    if value is None or isinstance(value, bool | int | float | str):
        return
    if isinstance(value, list):
        for i, item in enumerate(value):
            _json_value(item, _at(path, i))
        return
    if isinstance(value, dict):
        for key, item in value.items():
            if not isinstance(key, str):
                raise ManifestError(path, f"keys must be strings, got {_kind(key)}")
            _json_value(item, _at(path, key))
        return
    raise ManifestError(path, f"must be plain JSON data, got {_kind(value)} (quote it)")


def _aware(moment: datetime) -> datetime:
    return moment if timezone.is_aware(moment) else moment.replace(tzinfo=UTC)


def _datetime_or_null(value: Any, path: str) -> datetime | None:
    if value is None:
        return None
    if isinstance(value, datetime):
        return _aware(value)
    if isinstance(value, date):
        return datetime.combine(value, time.min, tzinfo=UTC)
    text = _str(value, path)
    try:
        return _aware(datetime.fromisoformat(text))
    except ValueError:
        raise ManifestError(path, f"must be an ISO 8601 date-time or null, got {text!r}")


def _date_or_null(value: Any, path: str) -> date | None:
    if value is None:
        return None
    if isinstance(value, datetime):
        raise ManifestError(path, "must be a date (YYYY-MM-DD), not a date-time")
    if isinstance(value, date):
        return value
    text = _str(value, path)
    try:
        return date.fromisoformat(text)
    except ValueError:
        raise ManifestError(path, f"must be a date (YYYY-MM-DD), got {text!r}")


def _decimal(value: Any, path: str) -> Decimal:
    if isinstance(value, bool) or not isinstance(value, int | float | str):
        raise ManifestError(path, f"must be a number, got {_kind(value)}")
    try:
        number = Decimal(str(value).strip())
    except InvalidOperation:
        raise ManifestError(path, f"must be a number, got {value!r}")
    if not number.is_finite():
        raise ManifestError(path, "must be a finite number")
    # Fact.value is DECIMAL(30, 10): anything finer would be rounded by the
    # database and then never compare equal to the file again.
    exponent = number.normalize().as_tuple().exponent
    if isinstance(exponent, int) and exponent < -10:
        raise ManifestError(path, "must have at most 10 decimal places")
    if number.adjusted() >= 20:
        raise ManifestError(path, "must have at most 20 digits before the decimal point")
    return number


def _http_url(value: Any, path: str) -> str:
    text = _str(value, path, max_length=500)
    parts = urlsplit(text)
    if parts.scheme not in {"http", "https"} or not parts.hostname:
        raise ManifestError(path, f"must be an http(s) URL, got {text!r}")
    return text


# --------------------------------------------------------------------------- parse


def parse_manifest(data: Any) -> Manifest:
    if data is None:
        raise ManifestError("", "the manifest is empty")
    _mapping(data, "", optional=("staff", "tenants"))
    staff = tuple(
        _parse_staff(item, _at("staff", i))
        for i, item in enumerate(_list(data.get("staff"), "staff"))
    )
    _unique(((s.path + ".username", s.username) for s in staff), "staff username")
    tenants = tuple(
        _parse_tenant(item, _at("tenants", i))
        for i, item in enumerate(_list(data.get("tenants"), "tenants"))
    )
    _unique(((t.path + ".key", t.key) for t in tenants), "tenant key")
    _unique(((u.path + ".username", u.username) for t in tenants for u in t.users), "username")
    _unique(((a.path + ".slug", a.slug) for t in tenants for a in t.apps), "app slug")
    return Manifest(staff=staff, tenants=tenants)


def _parse_staff(item: Any, path: str) -> StaffSpec:
    _mapping(item, path, required=("username",), optional=("password", "passwordEnv", "superuser"))
    if ("password" in item) == ("passwordEnv" in item):
        raise ManifestError(_at(path, "password"), "give exactly one of password or passwordEnv")
    if "password" in item:
        password = _str(item["password"], _at(path, "password"))
    else:
        password = _secret_from_env(item["passwordEnv"], _at(path, "passwordEnv"))
    return StaffSpec(
        path=path,
        username=_username(item["username"], _at(path, "username")),
        password=password,
        superuser=_bool(item.get("superuser", True), _at(path, "superuser")),
    )


def _parse_tenant(item: Any, path: str) -> TenantSpec:
    _mapping(
        item,
        path,
        required=("key", "name"),
        optional=("users", "knowledge", "agents", "apps", "vocabulary"),
    )
    users = tuple(
        _parse_user(u, _at(_at(path, "users"), i))
        for i, u in enumerate(_list(item.get("users"), _at(path, "users")))
    )
    knowledge = tuple(
        _parse_knowledge(k, _at(_at(path, "knowledge"), i))
        for i, k in enumerate(_list(item.get("knowledge"), _at(path, "knowledge")))
    )
    _unique(((k.path + ".key", k.key) for k in knowledge), "knowledge key")
    agents = tuple(
        _parse_agent(a, _at(_at(path, "agents"), i))
        for i, a in enumerate(_list(item.get("agents"), _at(path, "agents")))
    )
    _unique(((a.path + ".key", a.key) for a in agents), "agent key")
    _refuse_sub_agent_cycles(agents)
    apps = tuple(
        _parse_app(a, _at(_at(path, "apps"), i))
        for i, a in enumerate(_list(item.get("apps"), _at(path, "apps")))
    )
    return TenantSpec(
        path=path,
        key=_slug(item["key"], _at(path, "key")),
        name=_str(item["name"], _at(path, "name"), max_length=200),
        users=users,
        knowledge=knowledge,
        agents=agents,
        apps=apps,
        vocabulary=parse_vocabulary(item.get("vocabulary"), _at(path, "vocabulary")),
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
    _mapping(item, path, required=("username",), optional=("token",))
    token = None
    if item.get("token") is not None:
        token = _str(item["token"], _at(path, "token"), max_length=200)
        if not token.startswith(TOKEN_PREFIX) or len(token) < MIN_FIXED_TOKEN_LENGTH:
            raise ManifestError(
                _at(path, "token"),
                f"a fixed token must start with {TOKEN_PREFIX!r} and be at least "
                f"{MIN_FIXED_TOKEN_LENGTH} characters long",
            )
    return UserSpec(
        path=path, username=_username(item["username"], _at(path, "username")), token=token
    )


def _parse_knowledge(item: Any, path: str) -> KnowledgeSpec:
    _mapping(item, path, required=("key", "type"), optional=("name", "versions", "vocabulary"))
    type_ = _choice(item["type"], _at(path, "type"), Knowledge.Type.values)
    versions = tuple(
        _parse_knowledge_version(v, _at(_at(path, "versions"), i), type_)
        for i, v in enumerate(_list(item.get("versions"), _at(path, "versions")))
    )
    _unique(((v.path + ".version", v.version) for v in versions), "version")
    return KnowledgeSpec(
        path=path,
        key=_slug(item["key"], _at(path, "key")),
        name=_str(item.get("name", ""), _at(path, "name"), max_length=200, empty=True),
        type=type_,
        versions=versions,
        vocabulary=parse_vocabulary(item.get("vocabulary"), _at(path, "vocabulary")),
    )


def _parse_knowledge_version(item: Any, path: str, type_: str) -> KnowledgeVersionSpec:
    common = ("version", "status")
    if type_ == Knowledge.Type.REMOTE:
        _mapping(
            item,
            path,
            required=(*common, "endpoint"),
            optional=("secret", "secretEnv", "timeoutSeconds"),
        )
        if ("secret" in item) == ("secretEnv" in item):
            raise ManifestError(_at(path, "secret"), "give exactly one of secret or secretEnv")
        if "secret" in item:
            secret_key, secret = "secret", _str(item["secret"], _at(path, "secret"), max_length=200)
        else:
            secret_key = "secretEnv"
            secret = _secret_from_env(item["secretEnv"], _at(path, "secretEnv"))
            if len(secret) > 200:
                raise ManifestError(
                    _at(path, "secretEnv"), "the secret is longer than 200 characters"
                )
        timeout = _number(
            item.get("timeoutSeconds", MAX_TIMEOUT_SECONDS), _at(path, "timeoutSeconds")
        )
        if not 0 < timeout <= MAX_TIMEOUT_SECONDS:
            raise ManifestError(
                _at(path, "timeoutSeconds"),
                f"must be more than 0 and at most {MAX_TIMEOUT_SECONDS} seconds, got {timeout:g}",
            )
        return KnowledgeVersionSpec(
            path=path,
            version=_version_label(item["version"], _at(path, "version")),
            status=_choice(item["status"], _at(path, "status"), KnowledgeVersion.Status.values),
            documents=(),
            endpoint=_http_url(item["endpoint"], _at(path, "endpoint")),
            secret=secret,
            secret_key=secret_key,
            timeout_seconds=timeout,
        )
    _mapping(item, path, required=common, optional=("documents",))
    documents = tuple(
        _parse_document(d, _at(_at(path, "documents"), i))
        for i, d in enumerate(_list(item.get("documents"), _at(path, "documents")))
    )
    _unique(((d.path + ".key", d.key) for d in documents), "document key")
    return KnowledgeVersionSpec(
        path=path,
        version=_version_label(item["version"], _at(path, "version")),
        status=_choice(item["status"], _at(path, "status"), KnowledgeVersion.Status.values),
        documents=documents,
    )


def _parse_document(item: Any, path: str) -> DocumentSpec:
    _mapping(
        item,
        path,
        required=("key", "title", "pages"),
        optional=("sourceVersion", "readers", "facts"),
    )
    pages_path = _at(path, "pages")
    pages = _list(item["pages"], pages_path, default_empty=False)
    if not pages:
        raise ManifestError(pages_path, "a document needs at least one page")
    for i, page in enumerate(pages):
        _str(page, _at(pages_path, i), empty=True)
    readers = None
    if "readers" in item:
        readers_path = _at(path, "readers")
        readers = tuple(
            ReaderSpec(path=_at(readers_path, i), username=_username(r, _at(readers_path, i)))
            for i, r in enumerate(_list(item["readers"], readers_path))
        )
        _unique(((r.path, r.username) for r in readers), "reader")
    facts = tuple(
        _parse_fact(f, _at(_at(path, "facts"), i))
        for i, f in enumerate(_list(item.get("facts"), _at(path, "facts")))
    )
    _unique(((f.path + ".key", f.key) for f in facts), "fact key")
    source_version = item.get("sourceVersion") or ""
    if isinstance(source_version, int) and not isinstance(source_version, bool):
        source_version = str(source_version)
    return DocumentSpec(
        path=path,
        key=_str(item["key"], _at(path, "key"), max_length=128),
        title=_str(item["title"], _at(path, "title"), max_length=500),
        source_version=_str(source_version, _at(path, "sourceVersion"), max_length=128, empty=True),
        pages=tuple(pages),
        readers=readers,
        facts=facts,
    )


def _parse_fact(item: Any, path: str) -> FactSpec:
    _mapping(item, path, required=("key", "value"), optional=("unit", "asOf", "label", "page"))
    page = item.get("page")
    if page is not None and (isinstance(page, bool) or not isinstance(page, int) or page < 1):
        raise ManifestError(_at(path, "page"), f"must be a page number (1, 2, …), got {page!r}")
    return FactSpec(
        page=page,
        path=path,
        key=_str(item["key"], _at(path, "key"), max_length=128),
        value=_decimal(item["value"], _at(path, "value")),
        unit=_str(item.get("unit", ""), _at(path, "unit"), max_length=32, empty=True),
        as_of=_date_or_null(item.get("asOf"), _at(path, "asOf")),
        label=_str(item.get("label", ""), _at(path, "label"), max_length=200, empty=True),
    )


def _parse_agent(item: Any, path: str) -> AgentSpec:
    _mapping(item, path, required=("key",), optional=("name", "versions"))
    versions = tuple(
        _parse_agent_version(v, _at(_at(path, "versions"), i))
        for i, v in enumerate(_list(item.get("versions"), _at(path, "versions")))
    )
    _unique(((v.path + ".version", v.version) for v in versions), "version")
    return AgentSpec(
        path=path,
        key=_slug(item["key"], _at(path, "key")),
        name=_str(item.get("name", ""), _at(path, "name"), max_length=200, empty=True),
        versions=versions,
    )


def _parse_agent_version(item: Any, path: str) -> AgentVersionSpec:
    _mapping(
        item,
        path,
        required=("version", "status", "model"),
        optional=("instructions", "allowedKnowledge", "subAgents", "maxSteps", "routing"),
    )
    allowed_path = _at(path, "allowedKnowledge")
    allowed = tuple(
        _knowledge_label(label, _at(allowed_path, i))
        for i, label in enumerate(_list(item.get("allowedKnowledge"), allowed_path))
    )
    _unique(((_at(allowed_path, i), label) for i, label in enumerate(allowed)), "knowledge version")
    sub_path = _at(path, "subAgents")
    sub_agents = tuple(
        _slug(key, _at(sub_path, i)) for i, key in enumerate(_list(item.get("subAgents"), sub_path))
    )
    _unique(((_at(sub_path, i), key) for i, key in enumerate(sub_agents)), "sub-agent")
    return AgentVersionSpec(
        path=path,
        version=_version_label(item["version"], _at(path, "version")),
        status=_choice(item["status"], _at(path, "status"), AgentVersion.Status.values),
        instructions=_str(item.get("instructions", ""), _at(path, "instructions"), empty=True),
        model=_parse_model(item["model"], _at(path, "model")),
        allowed_knowledge=allowed,
        sub_agents=sub_agents,
        max_steps=_int(item.get("maxSteps", 20), _at(path, "maxSteps"), minimum=1, maximum=1000),
        routing=_parse_routing(item.get("routing"), _at(path, "routing"), allowed),
    )


def _knowledge_label(value: Any, path: str) -> str:
    text = _str(value, path, max_length=200)
    key, at, version = text.partition("@")
    if not at or not key or not version or not _SLUG.match(key):
        raise ManifestError(path, f"must be 'knowledge-key@version', got {text!r}")
    return text


def _parse_model(value: Any, path: str) -> dict[str, Any]:
    # The providers' own validator: the manifest accepts exactly what an agent
    # call can run (one home for the model-config rules).
    try:
        validate_model_config(value)
    except ModelConfigError as exc:
        raise ManifestError(_at_path(path, exc.path), exc.problem)
    _json_value(value, path)
    model: dict[str, Any] = value
    return model


def _at_path(path: str, relative: str) -> str:
    if not relative:
        return path
    return f"{path}{relative}" if relative.startswith("[") else f"{path}.{relative}"


def _parse_routing(value: Any, path: str, allowed: tuple[str, ...]) -> list[Any]:
    rules = _list(value, path)
    for i, rule in enumerate(rules):
        rule_path = _at(path, i)
        _mapping(rule, rule_path, required=("match", "knowledge"))
        _str(rule["match"], _at(rule_path, "match"))
        labels_path = _at(rule_path, "knowledge")
        for j, label in enumerate(_list(rule["knowledge"], labels_path, default_empty=False)):
            _knowledge_label(label, _at(labels_path, j))
            if label not in allowed:
                raise ManifestError(_at(labels_path, j), f"{label!r} is not in allowedKnowledge")
    return rules


def _parse_app(item: Any, path: str) -> AppSpec:
    _mapping(
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
    members_path = _at(path, "members")
    members = []
    for i, member in enumerate(_list(item.get("members"), members_path)):
        member_path = _at(members_path, i)
        _mapping(member, member_path, required=("user",), optional=("history",))
        members.append(
            MemberSpec(
                path=member_path,
                username=_username(member["user"], _at(member_path, "user")),
                history=_bool(member.get("history", False), _at(member_path, "history")),
            )
        )
    _unique(((m.path + ".user", m.username) for m in members), "member")
    leases_path = _at(path, "leases")
    leases = []
    for i, lease in enumerate(_list(item.get("leases"), leases_path)):
        lease_path = _at(leases_path, i)
        _mapping(lease, lease_path, required=("knowledge",), optional=("expiresAt", "revoked"))
        leases.append(
            LeaseSpec(
                path=lease_path,
                knowledge=_knowledge_label(lease["knowledge"], _at(lease_path, "knowledge")),
                expires_at=_datetime_or_null(lease.get("expiresAt"), _at(lease_path, "expiresAt")),
                revoked=(
                    _bool(lease["revoked"], _at(lease_path, "revoked"))
                    if "revoked" in lease
                    else None
                ),
            )
        )
    _unique(((lease.path + ".knowledge", lease.knowledge) for lease in leases), "lease")
    pins_path = _at(path, "agents")
    pins_value = item.get("agents") or {}
    if not isinstance(pins_value, dict):
        raise ManifestError(
            pins_path, f"must be a mapping of agent key → version, got {_kind(pins_value)}"
        )
    pins = tuple(
        PinSpec(
            path=_at(pins_path, str(key)),
            agent=_slug(key, _at(pins_path, str(key))),
            version=_version_label(version, _at(pins_path, str(key))),
        )
        for key, version in pins_value.items()
    )
    epochs = {}
    for key in ("securityPolicyEpoch", "knowledgeAccessEpoch"):
        if item.get(key) is not None:
            epochs[key] = _int(item[key], _at(path, key), minimum=1, maximum=2**31 - 1)
    return AppSpec(
        path=path,
        slug=_slug(item["slug"], _at(path, "slug")),
        name=_str(item["name"], _at(path, "name"), max_length=200),
        status=_choice(
            item.get("status", App.Status.ACTIVE), _at(path, "status"), App.Status.values
        ),
        retention_days=_int(
            item.get("retentionDays", 30), _at(path, "retentionDays"), minimum=1, maximum=36500
        ),
        security_policy_epoch=epochs.get("securityPolicyEpoch"),
        knowledge_access_epoch=epochs.get("knowledgeAccessEpoch"),
        members=tuple(members),
        leases=tuple(leases),
        pins=pins,
    )


# --------------------------------------------------------------------------- apply


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


def apply_manifest(manifest: Manifest, *, dry_run: bool = False) -> ApplyResult:
    """Make the database match the manifest, all or nothing.

    With ``dry_run`` every write happens and is counted, then rolled back.
    """
    result = ApplyResult(dry_run=dry_run)
    with transaction.atomic():
        _Applier(result).apply(manifest)
        if dry_run:
            transaction.set_rollback(True)
    if dry_run:
        result.tokens = []  # they were rolled back with everything else
    return result


KNOWLEDGE_TRANSITIONS: dict[str, set[str]] = {
    KnowledgeVersion.Status.DRAFT: {"DRAFT", "PUBLISHED", "REVOKED"},
    KnowledgeVersion.Status.PUBLISHED: {"PUBLISHED", "REVOKED"},
    KnowledgeVersion.Status.REVOKED: {"REVOKED"},
}
# The model would let a RETIRED agent version be published again; the manifest
# does not, so that "retired" means the same thing as "revoked" for knowledge.
AGENT_TRANSITIONS: dict[str, set[str]] = {
    AgentVersion.Status.DRAFT: {"DRAFT", "PUBLISHED", "RETIRED"},
    AgentVersion.Status.PUBLISHED: {"PUBLISHED", "RETIRED"},
    AgentVersion.Status.RETIRED: {"RETIRED"},
}


class _Applier:
    def __init__(self, result: ApplyResult) -> None:
        self.result = result
        self.User = get_user_model()

    def change(self, text: str) -> None:
        self.result.changes.append(text)

    def warn(self, text: str) -> None:
        self.result.warnings.append(text)

    def apply(self, manifest: Manifest) -> None:
        for staff in manifest.staff:
            self.apply_staff(staff)
        for tenant_spec in manifest.tenants:
            self.apply_tenant(tenant_spec)

    # ---- staff

    def apply_staff(self, spec: StaffSpec) -> None:
        user = self.User.objects.filter(username=spec.username).first()
        created = user is None
        if user is None:
            user = self.User(username=spec.username)
        try:
            validate_password(spec.password, user)
        except ValidationError as exc:
            raise ManifestError(_at(spec.path, "password"), " ".join(exc.messages))
        if spec.superuser and not created and TenantUser.objects.filter(user=user).exists():
            raise ManifestError(
                _at(spec.path, "username"),
                f"{spec.username!r} is a business user; a superuser passes every object "
                "permission, so it cannot be one (use superuser: false or another username)",
            )
        if created:
            user.is_staff, user.is_superuser = True, spec.superuser
            user.set_password(spec.password)
            user.save()
            self.change(f"+ staff {spec.username}")
            return
        updates = []
        for attr, wanted in (
            ("is_staff", True),
            ("is_superuser", spec.superuser),
            ("is_active", True),
        ):
            if getattr(user, attr) != wanted:
                setattr(user, attr, wanted)
                updates.append(attr)
        if not user.check_password(spec.password):
            user.set_password(spec.password)
            updates.append("password")
        if updates:
            user.save()
            self.change(f"~ staff {spec.username}: {', '.join(updates)}")

    # ---- tenant

    def apply_tenant(self, spec: TenantSpec) -> None:
        tenant = Tenant.objects.filter(key=spec.key).first()
        if tenant is None:
            tenant = Tenant.objects.create(key=spec.key, name=spec.name)
            self.change(f"+ tenant {spec.key}")
        elif tenant.name != spec.name:
            tenant.name = spec.name
            tenant.save(update_fields=["name"])
            self.change(f"~ tenant {spec.key}: name")
        if apply_vocabulary(tenant, None, spec.vocabulary):
            self.change(f"~ tenant {spec.key}: vocabulary")
        for user_spec in spec.users:
            self.apply_user(tenant, user_spec)
        for knowledge_spec in spec.knowledge:
            self.apply_knowledge(tenant, knowledge_spec)
        agents = {a.key: self.apply_agent(tenant, a) for a in spec.agents}
        for agent_spec in spec.agents:
            for version_spec in agent_spec.versions:
                self.apply_agent_version(tenant, agents[agent_spec.key], version_spec)
        for app_spec in spec.apps:
            self.apply_app(tenant, app_spec)
        # Once every pin of the file is applied (a file may retire a version and pin its
        # successor): a version still pinned cannot be retired — the admin's rule too.
        paths = {
            (agent_spec.key, version_spec.version): _at(version_spec.path, "status")
            for agent_spec in spec.agents
            for version_spec in agent_spec.versions
        }
        for version in (
            AgentVersion.objects.filter(
                agent__tenant=tenant, status=AgentVersion.Status.RETIRED, pins__isnull=False
            )
            .select_related("agent")
            .distinct()
        ):
            try:
                refuse_retiring_pinned(version)
            except PinnedVersionError as exc:
                path = paths.get((version.agent.key, version.version), spec.path)
                raise ManifestError(path, str(exc)) from None

    def tenant_user(self, tenant: Tenant, username: str, path: str) -> User:
        user = self.User.objects.filter(username=username, tenant_user__tenant=tenant).first()
        if user is None:
            raise ManifestError(
                path, f"unknown user {username!r} (not a user of tenant {tenant.key})"
            )
        return user

    def apply_user(self, tenant: Tenant, spec: UserSpec) -> None:
        label = f"{tenant.key}/{spec.username}"
        user = self.User.objects.filter(username=spec.username).first()
        if user is None:
            user = self.User.objects.create_user(username=spec.username, password=None)
            TenantUser.objects.create(tenant=tenant, user=user)
            self.change(f"+ user {label}")
        if user.is_superuser:
            # Guardian grants a superuser every object permission: as a business
            # user it would read every restricted document and every app's history.
            raise ManifestError(
                _at(spec.path, "username"),
                f"{spec.username!r} is a superuser and cannot be a business user",
            )
        membership = TenantUser.objects.filter(user=user).select_related("tenant").first()
        if membership is None:
            # An existing Django user (e.g. staff) becomes a user of this tenant.
            TenantUser.objects.create(tenant=tenant, user=user)
            self.change(f"+ tenant user {label}")
        elif membership.tenant_id != tenant.pk:
            raise ManifestError(
                _at(spec.path, "username"),
                f"user {spec.username!r} already belongs to tenant {membership.tenant.key}",
            )
        if spec.token:
            existing = ApiToken.objects.filter(digest=hash_token(spec.token)).first()
            if existing is None:
                ApiToken.issue(user, raw=spec.token)
                self.change(f"+ token {label} (fixed, {spec.token[:10]}…)")
            elif existing.user_id != user.pk:
                raise ManifestError(_at(spec.path, "token"), "this token belongs to another user")
            elif existing.revoked_at is not None:
                # Revocation is a security decision: the file never undoes it.
                self.warn(
                    f"the fixed token of {label} is revoked and stays revoked; give a new token"
                )
        elif not ApiToken.objects.usable().filter(user=user).exists():
            _, raw = ApiToken.issue(user)
            self.result.tokens.append((label, raw))
            self.change(f"+ token {label} (generated)")

    # ---- knowledge

    def apply_knowledge(self, tenant: Tenant, spec: KnowledgeSpec) -> None:
        label = f"{tenant.key}/{spec.key}"
        knowledge = Knowledge.objects.filter(tenant=tenant, key=spec.key).first()
        if knowledge is None:
            knowledge = Knowledge.objects.create(
                tenant=tenant, key=spec.key, name=spec.name, type=spec.type
            )
            self.change(f"+ knowledge {label} ({spec.type})")
        else:
            if knowledge.type != spec.type:
                raise ManifestError(
                    _at(spec.path, "type"),
                    f"knowledge {spec.key!r} is {knowledge.type}; its type cannot change "
                    "(declare new knowledge instead)",
                )
            if knowledge.name != spec.name:
                knowledge.name = spec.name
                knowledge.save(update_fields=["name"])
                self.change(f"~ knowledge {label}: name")
        if apply_vocabulary(tenant, knowledge, spec.vocabulary):
            self.change(f"~ knowledge {label}: vocabulary")
        for version_spec in spec.versions:
            self.apply_knowledge_version(tenant, knowledge, version_spec)

    def apply_knowledge_version(
        self, tenant: Tenant, knowledge: Knowledge, spec: KnowledgeVersionSpec
    ) -> None:
        label = f"{tenant.key}/{knowledge.key}@{spec.version}"
        version = KnowledgeVersion.objects.filter(knowledge=knowledge, version=spec.version).first()
        if version is None:
            version = KnowledgeVersion.objects.create(
                knowledge=knowledge,
                version=spec.version,
                endpoint=spec.endpoint,
                secret=spec.secret,
                timeout_seconds=spec.timeout_seconds,
            )
            for document_spec in spec.documents:
                self.ingest(version, document_spec)
            count = len(spec.documents)
            what = f" ({count} document{'s' if count != 1 else ''})" if count else ""
            self.change(f"+ knowledge version {label}{what}")
        elif version.status == KnowledgeVersion.Status.DRAFT:
            self.sync_draft_version(version, spec, label)
        else:
            self.check_frozen_version(version, spec)
        if knowledge.type == Knowledge.Type.REMOTE:
            self.check_remote_host(spec)
        documents = {d.key: d for d in version.documents.all()}
        for document_spec in spec.documents:
            self.apply_readers(tenant, documents[document_spec.key], document_spec, label)
        if spec.status != version.status:
            if spec.status not in KNOWLEDGE_TRANSITIONS[version.status]:
                hint = (
                    "a revoked version stays revoked; publish a new version"
                    if version.status == KnowledgeVersion.Status.REVOKED
                    else "a published version cannot go back to DRAFT"
                )
                raise ManifestError(
                    _at(spec.path, "status"),
                    f"{label} is {version.status}; it cannot become {spec.status} ({hint})",
                )
            before = version.status
            version.status = spec.status
            version.save()
            self.change(f"~ knowledge version {label}: {before} → {spec.status}")

    def check_remote_host(self, spec: KnowledgeVersionSpec) -> None:
        parts = urlsplit(spec.endpoint)
        allowed = set(settings.SPARKTIDE_REMOTE_ALLOWED_HOSTS)
        if parts.hostname not in allowed and parts.netloc not in allowed:
            self.warn(
                f"{spec.path}.endpoint: host {parts.netloc} is not in "
                "SPARKTIDE_REMOTE_ALLOWED_HOSTS; calls to it will be refused until it is"
            )

    def ingest(self, version: KnowledgeVersion, spec: DocumentSpec) -> Document:
        try:
            return ingest_document(
                version,
                key=spec.key,
                title=spec.title,
                pages=spec.pages,
                source_version=spec.source_version,
                restricted=spec.readers is not None,
                facts=[
                    FactInput(
                        key=f.key,
                        value=f.value,
                        unit=f.unit,
                        as_of=f.as_of,
                        label=f.label,
                        page=f.page,
                    )
                    for f in spec.facts
                ],
            )
        except FactNotStated as exc:
            raise ManifestError(_at(spec.facts[exc.index].path, exc.field), str(exc)) from None

    def remote_differences(
        self, version: KnowledgeVersion, spec: KnowledgeVersionSpec
    ) -> list[str]:
        differences = []
        if version.endpoint != spec.endpoint:
            differences.append("endpoint")
        if version.secret != spec.secret:
            differences.append(spec.secret_key)
        if version.timeout_seconds != spec.timeout_seconds:
            differences.append("timeoutSeconds")
        return differences

    def sync_draft_version(
        self, version: KnowledgeVersion, spec: KnowledgeVersionSpec, label: str
    ) -> None:
        """A DRAFT's content follows the file: changed documents are re-ingested."""
        remote = self.remote_differences(version, spec)
        if remote:
            version.endpoint, version.secret = spec.endpoint, spec.secret
            version.timeout_seconds = spec.timeout_seconds
            version.save()
            self.change(f"~ knowledge version {label}: {', '.join(remote)}")
        stored = {d.key: d for d in version.documents.all()}
        chunks = _chunk_bounds(version)
        wanted = {d.key for d in spec.documents}
        for key, stored_document in stored.items():
            if key not in wanted:
                _delete_document(stored_document)
                self.change(f"- document {label}/{key}")
        for document_spec in spec.documents:
            document = stored.get(document_spec.key)
            if document is None:
                self.ingest(version, document_spec)
                self.change(f"+ document {label}/{document_spec.key}")
                continue
            differences = _document_differences(document, document_spec, chunks[document.pk])
            if differences:
                _delete_document(document)
                self.ingest(version, document_spec)
                fields = ", ".join(path.rsplit(".", 1)[-1] for path, _ in differences)
                self.change(f"~ document {label}/{document_spec.key}: {fields}")

    def check_frozen_version(self, version: KnowledgeVersion, spec: KnowledgeVersionSpec) -> None:
        remote = self.remote_differences(version, spec)
        if remote:
            raise ManifestError(
                _at(spec.path, remote[0]),
                f"{PUBLISHED_CONTENT_MESSAGE} ({version.label} is {version.status})",
            )
        stored = {d.key: d for d in version.documents.all()}
        chunks = _chunk_bounds(version)
        wanted = {d.key for d in spec.documents}
        missing = sorted(set(stored) - wanted)
        if missing:
            raise ManifestError(
                _at(spec.path, "documents"),
                f"{PUBLISHED_CONTENT_MESSAGE} (document {missing[0]!r} of {version.label} "
                "is missing from the file)",
            )
        for document_spec in spec.documents:
            document = stored.get(document_spec.key)
            if document is None:
                raise ManifestError(
                    _at(document_spec.path, "key"),
                    f"{PUBLISHED_CONTENT_MESSAGE} (document {document_spec.key!r} is not in "
                    f"{version.label})",
                )
            differences = _document_differences(document, document_spec, chunks[document.pk])
            if differences:
                path, detail = differences[0]
                raise ManifestError(
                    path,
                    f"{PUBLISHED_CONTENT_MESSAGE} ({version.label} is {version.status}: {detail})",
                )

    def apply_readers(
        self, tenant: Tenant, document: Document, spec: DocumentSpec, label: str
    ) -> None:
        restricted = spec.readers is not None
        if document.restricted != restricted:
            document.restricted = restricted
            # restricted is the ACL, not content: allowed on a published version.
            document.save(update_fields=["restricted"])
            self.change(
                f"~ document {label}/{document.key}: "
                + ("readers restricted" if restricted else "readable by every tenant user")
            )
        wanted = {
            user.pk: user
            for user in (
                self.tenant_user(tenant, reader.username, reader.path)
                for reader in spec.readers or ()
            )
        }
        self.sync_object_perm(
            document,
            READ_DOCUMENT,
            wanted,
            f"reader of {label}/{document.key}",
        )

    def sync_object_perm(self, obj: Model, perm: str, wanted: dict[int, User], what: str) -> None:
        """Make the users holding ``perm`` on ``obj`` directly exactly ``wanted``."""
        codename = perm.split(".", 1)[1]
        grants = UserObjectPermission.objects.filter(
            content_type=ContentType.objects.get_for_model(obj),
            object_pk=str(obj.pk),
            permission__codename=codename,
        )
        holders = dict(grants.values_list("user_id", "user__username"))
        for user_id, user in wanted.items():
            if user_id not in holders:
                assign_perm(perm, user, obj)
                self.change(f"+ {what}: {user.get_username()}")
        for user_id, username in holders.items():
            if user_id not in wanted:
                grants.filter(user_id=user_id).delete()
                self.change(f"- {what}: {username}")

    # ---- agents

    def apply_agent(self, tenant: Tenant, spec: AgentSpec) -> Agent:
        agent = Agent.objects.filter(tenant=tenant, key=spec.key).first()
        if agent is None:
            agent = Agent.objects.create(tenant=tenant, key=spec.key, name=spec.name)
            self.change(f"+ agent {tenant.key}/{spec.key}")
        elif agent.name != spec.name:
            agent.name = spec.name
            agent.save(update_fields=["name"])
            self.change(f"~ agent {tenant.key}/{spec.key}: name")
        return agent

    def resolve_knowledge_version(self, tenant: Tenant, label: str, path: str) -> KnowledgeVersion:
        key, _, version = label.partition("@")
        found = (
            KnowledgeVersion.objects.filter(
                knowledge__tenant=tenant, knowledge__key=key, version=version
            )
            .select_related("knowledge")
            .first()
        )
        if found is None:
            raise ManifestError(path, f"no knowledge version {label!r} in tenant {tenant.key}")
        return found

    def apply_agent_version(self, tenant: Tenant, agent: Agent, spec: AgentVersionSpec) -> None:
        label = f"{tenant.key}/{agent.key}@{spec.version}"
        allowed_path = _at(spec.path, "allowedKnowledge")
        knowledge = [
            self.resolve_knowledge_version(tenant, name, _at(allowed_path, i))
            for i, name in enumerate(spec.allowed_knowledge)
        ]
        sub_agents = []
        for i, key in enumerate(spec.sub_agents):
            sub_agent = Agent.objects.filter(tenant=tenant, key=key).first()
            if sub_agent is None:
                raise ManifestError(
                    _at(_at(spec.path, "subAgents"), i), f"no agent {key!r} in tenant {tenant.key}"
                )
            sub_agents.append(sub_agent)
        version = AgentVersion.objects.filter(agent=agent, version=spec.version).first()
        if version is None or version.status == AgentVersion.Status.DRAFT:
            for i, knowledge_version in enumerate(knowledge):
                if knowledge_version.status != KnowledgeVersion.Status.PUBLISHED:
                    raise ManifestError(
                        _at(allowed_path, i),
                        f"{spec.allowed_knowledge[i]!r} is {knowledge_version.status}; "
                        "allowedKnowledge may only name PUBLISHED versions",
                    )
            self.write_draft_agent_version(agent, version, spec, knowledge, sub_agents, label)
            version = AgentVersion.objects.get(agent=agent, version=spec.version)
        else:
            self.check_frozen_agent_version(version, spec)
        if spec.status != version.status:
            if spec.status not in AGENT_TRANSITIONS[version.status]:
                raise ManifestError(
                    _at(spec.path, "status"),
                    f"agent version {label} is {version.status}; it cannot become {spec.status} "
                    "(publish a new version)",
                )
            before = version.status
            version.status = spec.status
            version.save()
            self.change(f"~ agent version {label}: {before} → {spec.status}")

    def write_draft_agent_version(
        self,
        agent: Agent,
        version: AgentVersion | None,
        spec: AgentVersionSpec,
        knowledge: list[KnowledgeVersion],
        sub_agents: list[Agent],
        label: str,
    ) -> None:
        fields = {
            "instructions": spec.instructions,
            "model": spec.model,
            "routing": spec.routing,
            "max_steps": spec.max_steps,
        }
        if version is None:
            version = AgentVersion.objects.create(agent=agent, version=spec.version, **fields)
            version.allowed_knowledge.set(knowledge)
            version.sub_agents.set(sub_agents)
            self.change(f"+ agent version {label}")
            return
        changed = [name for name, value in fields.items() if getattr(version, name) != value]
        for name in changed:
            setattr(version, name, fields[name])
        if changed:
            version.save()
        if {k.pk for k in version.allowed_knowledge.all()} != {k.pk for k in knowledge}:
            version.allowed_knowledge.set(knowledge)
            changed.append("allowed_knowledge")
        if {a.pk for a in version.sub_agents.all()} != {a.pk for a in sub_agents}:
            version.sub_agents.set(sub_agents)
            changed.append("sub_agents")
        if changed:
            self.change(f"~ agent version {label}: {', '.join(changed)}")

    def check_frozen_agent_version(self, version: AgentVersion, spec: AgentVersionSpec) -> None:
        stored_knowledge = {
            f"{k.knowledge.key}@{k.version}"
            for k in version.allowed_knowledge.select_related("knowledge")
        }
        stored_sub_agents = {a.key for a in version.sub_agents.all()}
        comparisons = (
            ("instructions", version.instructions, spec.instructions),
            ("model", version.model, spec.model),
            ("allowedKnowledge", stored_knowledge, set(spec.allowed_knowledge)),
            ("subAgents", stored_sub_agents, set(spec.sub_agents)),
            ("maxSteps", version.max_steps, spec.max_steps),
            ("routing", version.routing, spec.routing),
        )
        for key, stored, wanted in comparisons:
            if stored != wanted:
                raise ManifestError(
                    _at(spec.path, key),
                    f"{PUBLISHED_CONTENT_MESSAGE} (agent version {version} is {version.status})",
                )

    # ---- apps

    def apply_app(self, tenant: Tenant, spec: AppSpec) -> None:
        app = App.objects.filter(slug=spec.slug).select_related("tenant").first()
        if app is not None and app.tenant_id != tenant.pk:
            raise ManifestError(
                _at(spec.path, "slug"), f"app {spec.slug!r} belongs to tenant {app.tenant.key}"
            )
        fields = {"name": spec.name, "status": spec.status, "retention_days": spec.retention_days}
        epochs = {
            "security_policy_epoch": (spec.security_policy_epoch, "securityPolicyEpoch"),
            "knowledge_access_epoch": (spec.knowledge_access_epoch, "knowledgeAccessEpoch"),
        }
        if app is None:
            app = App.objects.create(
                tenant=tenant,
                slug=spec.slug,
                **fields,
                **{name: value for name, (value, _) in epochs.items() if value is not None},
            )
            self.change(f"+ app {spec.slug}")
        else:
            changed = []
            for name, value in fields.items():
                if getattr(app, name) != value:
                    changed.append(f"{name} {getattr(app, name)} → {value}")
                    setattr(app, name, value)
            for name, (value, key) in epochs.items():
                if value is None or value == getattr(app, name):
                    continue
                if value < getattr(app, name):
                    # An epoch that went back would make previews of runs made
                    # under a newer policy valid again.
                    raise ManifestError(
                        _at(spec.path, key),
                        f"epochs only go up: {spec.slug} is at {getattr(app, name)}, the file says {value}",
                    )
                changed.append(f"{name} {getattr(app, name)} → {value}")
                setattr(app, name, value)
            if changed:
                app.save()
                self.change(f"~ app {spec.slug}: {'; '.join(changed)}")
        self.apply_members(tenant, app, spec)
        self.apply_leases(tenant, app, spec)
        self.apply_pins(tenant, app, spec)

    def apply_members(self, tenant: Tenant, app: App, spec: AppSpec) -> None:
        wanted = {}
        for member in spec.members:
            user = self.tenant_user(tenant, member.username, _at(member.path, "user"))
            wanted[user.pk] = (user, member.history)
        current = {m.user_id: m for m in app.memberships.select_related("user")}
        for user_id, (user, _) in wanted.items():
            if user_id not in current:
                Membership.objects.create(app=app, user=user)
                self.change(f"+ member {app.slug}: {user.get_username()}")
        for user_id, membership in current.items():
            if user_id not in wanted:
                membership.delete()
                self.change(f"- member {app.slug}: {membership.user.get_username()}")
        self.sync_object_perm(
            app,
            VIEW_RUN_HISTORY,
            {user_id: user for user_id, (user, history) in wanted.items() if history},
            f"history of {app.slug}",
        )

    def apply_leases(self, tenant: Tenant, app: App, spec: AppSpec) -> None:
        now = timezone.now()
        kept = set()
        for lease_spec in spec.leases:
            version = self.resolve_knowledge_version(
                tenant, lease_spec.knowledge, _at(lease_spec.path, "knowledge")
            )
            kept.add(version.pk)
            label = f"{app.slug} → {lease_spec.knowledge}"
            lease = Lease.objects.filter(app=app, version=version).first()
            revoked_at = now if lease_spec.revoked else None
            if lease is None:
                Lease.objects.create(
                    app=app,
                    version=version,
                    expires_at=lease_spec.expires_at,
                    revoked_at=revoked_at,
                )
                self.change(f"+ lease {label}")
                continue
            changed = []
            if lease.expires_at != lease_spec.expires_at:
                lease.expires_at = lease_spec.expires_at
                changed.append("expiresAt")
            if lease_spec.revoked is True and lease.revoked_at is None:
                lease.revoked_at = now
                changed.append("revoked")
            elif lease_spec.revoked is False and lease.revoked_at is not None:
                lease.revoked_at = None
                changed.append("restored")
            if changed:
                lease.save()
                self.change(f"~ lease {label}: {', '.join(changed)}")
        # A lease the file no longer lists is revoked, not deleted: runs made
        # under it keep their audit trail.
        dropped = Lease.objects.filter(app=app, revoked_at__isnull=True).exclude(version__in=kept)
        for lease in dropped.select_related("version__knowledge"):
            lease.revoked_at = now
            lease.save(update_fields=["revoked_at"])
            self.change(f"- lease {app.slug} → {lease.version.label} (revoked)")

    def apply_pins(self, tenant: Tenant, app: App, spec: AppSpec) -> None:
        kept = set()
        for pin_spec in spec.pins:
            agent = Agent.objects.filter(tenant=tenant, key=pin_spec.agent).first()
            if agent is None:
                raise ManifestError(
                    pin_spec.path, f"no agent {pin_spec.agent!r} in tenant {tenant.key}"
                )
            version = AgentVersion.objects.filter(agent=agent, version=pin_spec.version).first()
            if version is None:
                raise ManifestError(
                    pin_spec.path, f"agent {pin_spec.agent!r} has no version {pin_spec.version!r}"
                )
            if version.status != AgentVersion.Status.PUBLISHED:
                raise ManifestError(
                    pin_spec.path,
                    f"agent version {version} is {version.status}; only a PUBLISHED version can be pinned",
                )
            kept.add(agent.pk)
            pin = AgentPin.objects.filter(app=app, agent=agent).select_related("version").first()
            if pin is None:
                AgentPin.objects.create(app=app, agent=agent, version=version)
                self.change(f"+ pin {app.slug}: {version}")
            elif pin.version_id != version.pk:
                before = pin.version.version
                pin.version = version
                pin.pinned_at = timezone.now()
                pin.save()
                self.change(f"~ pin {app.slug}: {agent.key} {before} → {version.version}")
        for pin in (
            AgentPin.objects.filter(app=app)
            .exclude(agent__in=kept)
            .select_related("version__agent")
        ):
            pin.delete()
            self.change(f"- pin {app.slug}: {pin.version}")


# --------------------------------------------------------------------------- helpers


def _chunk_bounds(version: KnowledgeVersion) -> dict[int, list[tuple[int, int, int]]]:
    bounds: dict[int, list[tuple[int, int, int]]] = {}
    for document_id, page, start, end in version.documents.values_list(
        "chunks__document_id", "chunks__page", "chunks__start", "chunks__end"
    ):
        if document_id is not None:
            bounds.setdefault(document_id, []).append((page, start, end))
    for document in version.documents.values_list("pk", flat=True):
        bounds.setdefault(document, [])
    return bounds


def _page_differences(
    document: Document, pages: tuple[str, ...], chunks: list[tuple[int, int, int]]
) -> tuple[int | None, str] | None:
    """(index of the first differing page or None, why) if the stored text does not
    match ``pages``; None if it does.

    The pages are not stored one by one; the full text and the page of each
    chunk are. Same text + same page count + every chunk inside its page's
    UTF-16 range means the same pages.
    """
    offset = 0
    for index, page in enumerate(pages):
        if document.text[offset : offset + len(page)] != page:
            return index, f"page {index + 1} differs"
        offset += len(page) + len(PAGE_SEPARATOR)
    if document.text != PAGE_SEPARATOR.join(pages) or document.page_count != len(pages):
        return None, f"the stored document has {document.page_count} pages, the file {len(pages)}"
    ranges = []
    start16 = 0
    for page in pages:
        length = utf16_len(page)
        ranges.append((start16, start16 + length))
        start16 += length + utf16_len(PAGE_SEPARATOR)
    for page_number, start, end in chunks:
        low, high = ranges[page_number - 1] if 0 < page_number <= len(ranges) else (0, -1)
        if not low <= start <= end <= high:
            return None, "page boundaries differ"
    return None


def _document_differences(
    document: Document, spec: DocumentSpec, chunks: list[tuple[int, int, int]]
) -> list[tuple[str, str]]:
    """(path, what) for each content field of the document that differs from the file."""
    differences = []
    if document.title != spec.title:
        differences.append((_at(spec.path, "title"), "the title differs"))
    if document.source_version != spec.source_version:
        differences.append((_at(spec.path, "sourceVersion"), "sourceVersion differs"))
    pages = _page_differences(document, spec.pages, chunks)
    if pages:
        index, why = pages
        path = _at(spec.path, "pages")
        differences.append((path if index is None else _at(path, index), why))
    stored = {f.key: f for f in document.facts.select_related("chunk")}
    # A page the file gives must be the page of the stored fact's chunk; without one, the
    # stored anchor (found in the same text by the same rule) stands.
    stored_facts = {
        key: (f.value, f.unit, f.as_of, f.label, f.chunk.page if f.chunk is not None else None)
        for key, f in stored.items()
    }
    wanted_facts = {
        f.key: (
            f.value,
            f.unit,
            f.as_of,
            f.label,
            f.page
            if f.page is not None
            else (stored_facts[f.key][4] if f.key in stored_facts else None),
        )
        for f in spec.facts
    }
    if stored_facts != wanted_facts:
        path = _at(spec.path, "facts")
        for index, fact in enumerate(spec.facts):
            if stored_facts.get(fact.key) != wanted_facts[fact.key]:
                path = _at(path, index)
                break
        differences.append((path, "the facts differ"))
    return differences


def _delete_document(document: Document) -> None:
    """Delete a DRAFT document and the object permissions guardian keeps beside it."""
    content_type = ContentType.objects.get_for_model(Document)
    for model in (UserObjectPermission, GroupObjectPermission):
        model.objects.filter(content_type=content_type, object_pk=str(document.pk)).delete()
    document.delete()


def describe(result: ApplyResult, source: str, write: Callable[[str], None]) -> None:
    """Human summary of an apply, for the command."""
    count = len(result.changes)
    if result.dry_run:
        head = f"Dry run of {source}: " + (
            f"{count} change{'s' if count != 1 else ''} would be made; nothing was written."
            if count
            else "no changes; the database already matches the file."
        )
    else:
        head = f"Applied {source}: " + (
            f"{count} change{'s' if count != 1 else ''}."
            if count
            else "no changes; the database already matches the file."
        )
    write(head)
    for line in result.changes:
        write(f"  {line}")
    for line in result.warnings:
        write(f"warning: {line}")
    if result.tokens:
        write("Generated tokens (shown once; they are stored only as hashes):")
        for label, raw in result.tokens:
            write(f"  {label}: {raw}")
