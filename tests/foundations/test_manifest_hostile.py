"""A hostile manifest corpus: every file ends in a ManifestError naming the file
and the key path, nothing is applied, and no traceback escapes (issue 10,
defect 9; issue 14, finding 4)."""

from io import StringIO

import pytest
import yaml
from django.core.management import call_command
from django.core.management.base import CommandError

from provisioning.manifest import (
    MAX_MANIFEST_BYTES,
    MAX_YAML_DEPTH,
    ManifestError,
    load_yaml,
    read_manifest,
)
from tests.foundations.test_manifest import base_manifest, snapshot

pytestmark = pytest.mark.django_db

T0 = "tenants[0]"


def _dump(data: dict) -> str:
    return yaml.safe_dump(data, allow_unicode=True, sort_keys=False)


def _with(mutate) -> str:
    data = base_manifest()
    mutate(data["tenants"][0])
    return _dump(data)


def _placeholder(mutate, raw: str) -> str:
    """The base manifest with ``@@RAW@@`` (set by ``mutate``) replaced by raw YAML."""
    return _with(mutate).replace("'@@RAW@@'", raw).replace("@@RAW@@", raw)


def _set(*path):
    *keys, value = path

    def mutate(tenant):
        target = tenant
        for key in keys[:-1]:
            target = target[key]
        target[keys[-1]] = value

    return mutate


def _agents_cycle(tenant):
    helper, researcher = tenant["agents"]
    helper["versions"][0]["subAgents"] = ["researcher"]


def _self_cycle(tenant):
    tenant["agents"][0]["versions"][0]["subAgents"] = ["helper"]


ALIAS_BOMB = "\n".join(
    [
        'a: &a ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]',
        "b: &b [*a,*a,*a,*a,*a,*a,*a,*a,*a]",
        "c: &c [*b,*b,*b,*b,*b,*b,*b,*b,*b]",
        "d: &d [*c,*c,*c,*c,*c,*c,*c,*c,*c]",
        "e: &e [*d,*d,*d,*d,*d,*d,*d,*d,*d]",
        "f: &f [*e,*e,*e,*e,*e,*e,*e,*e,*e]",
        "g: &g [*f,*f,*f,*f,*f,*f,*f,*f,*f]",
        "h: &h [*g,*g,*g,*g,*g,*g,*g,*g,*g]",
        "i: &i [*h,*h,*h,*h,*h,*h,*h,*h,*h]",
        "tenants: [*i]",
    ]
)

DOC = f"{T0}.knowledge[0].versions[0].documents[0]"

CORPUS = {
    "NUL in the tenant name": (_with(_set("name", "Acme\x00")), f"{T0}.name", "NUL"),
    "NUL in a page": (
        _with(_set("knowledge", 0, "versions", 0, "documents", 0, "pages", 1, "第二页\x00")),
        f"{DOC}.pages[1]",
        "NUL",
    ),
    "NUL in a username": (
        _with(_set("users", 1, "username", "b\x00b")),
        f"{T0}.users[1].username",
        "NUL",
    ),
    "NUL in a model key": (
        _with(_set("agents", 0, "versions", 0, "model", {"provider": "extractive", "k\x00": 1})),
        f"{T0}.agents[0].versions[0].model.k\x00",
        "NUL",
    ),
    "NUL escape in a double-quoted scalar": (
        _placeholder(_set("apps", 0, "name", "@@RAW@@"), '"业务\\0应用"'),
        f"{T0}.apps[0].name",
        "NUL",
    ),
    "lone surrogate in a title": (
        _placeholder(
            _set("knowledge", 0, "versions", 0, "documents", 0, "title", "@@RAW@@"), '"报告\\ud800"'
        ),
        f"{DOC}.title",
        "lone surrogate (U+D800)",
    ),
    "lone low surrogate in instructions": (
        _placeholder(
            _set("agents", 1, "versions", 0, "instructions", "@@RAW@@"), '"\\udfff只依据"'
        ),
        f"{T0}.agents[1].versions[0].instructions",
        "lone surrogate (U+DFFF)",
    ),
    "impossible date in a fact": (
        _placeholder(
            _set("knowledge", 0, "versions", 0, "documents", 0, "facts", 0, "asOf", "@@RAW@@"),
            "2026-02-30",
        ),
        f"{DOC}.facts[0].asOf",
        "2026-02-30",
    ),
    "impossible explicit timestamp": (
        _placeholder(
            _set("knowledge", 0, "versions", 0, "documents", 0, "facts", 0, "asOf", "@@RAW@@"),
            "!!timestamp 2026-13-01",
        ),
        f"{DOC}.facts[0].asOf",
        "2026-13-01",
    ),
    "impossible lease expiry": (
        _placeholder(_set("apps", 0, "leases", 0, "expiresAt", "@@RAW@@"), "2026-02-30T10:00:00Z"),
        f"{T0}.apps[0].leases[0].expiresAt",
        "2026-02-30",
    ),
    "deep nesting": (
        _placeholder(
            _set("agents", 0, "versions", 0, "model", "@@RAW@@"), "[" * 10_000 + "]" * 10_000
        ),
        f"{T0}.agents[0].versions[0].model",
        f"deeper than {MAX_YAML_DEPTH} levels",
    ),
    "deep block nesting": (
        "tenants:\n"
        + "".join(f"{'  ' * (i + 1)}k{i}:\n" for i in range(200))
        + "  " * 201
        + "v: 1\n",
        "tenants.k0.k1.k2",
        f"deeper than {MAX_YAML_DEPTH} levels",
    ),
    "alias bomb": (ALIAS_BOMB, "b[0]", "aliases (*a) are not allowed"),
    "alias bomb inside a model config": (
        _placeholder(
            _set("agents", 0, "versions", 0, "model", "@@RAW@@"),
            "{provider: extractive, "
            + ", ".join(
                f"{n}: &{n} [" + ",".join([f"*{p}"] * 9 if p else ['"lol"'] * 9) + "]"
                for p, n in zip(["", *"abcdefgh"], "abcdefghi", strict=True)
            )
            + "}",
        ),
        f"{T0}.agents[0].versions[0].model.b[0]",
        "aliases (*a) are not allowed",
    ),
    "merge key alias": (
        "base: &base {key: acme, name: x}\ntenants: [{<<: *base}]\n",
        "tenants[0].<<",
        "aliases (*base) are not allowed",
    ),
    "circular sub-agents": (
        _with(_agents_cycle),
        f"{T0}.agents[1].versions[0].subAgents[0]",
        "helper → researcher → helper",
    ),
    "an agent that calls itself": (
        _with(_self_cycle),
        f"{T0}.agents[0].versions[0].subAgents[0]",
        "helper → helper",
    ),
    "scripted sleep above the provider's bound": (
        _with(
            _set(
                "agents",
                1,
                "versions",
                0,
                "model",
                {"provider": "scripted", "steps": [{"sleep": 31}]},
            )
        ),
        f"{T0}.agents[1].versions[0].model.steps[0].sleep",
        "between 0 and 30",
    ),
    "openai key the provider does not know": (
        _with(
            _set(
                "agents",
                0,
                "versions",
                0,
                "model",
                {
                    "provider": "openai",
                    "baseUrl": "http://127.0.0.1:1/v1",
                    "model": "m",
                    "apiKeyEnv": "OPENAI_KEY",
                    "stream": True,
                },
            )
        ),
        f"{T0}.agents[0].versions[0].model.stream",
        "not a setting of the openai provider",
    ),
}


@pytest.mark.parametrize(("text", "key_path", "reason"), CORPUS.values(), ids=CORPUS.keys())
def test_a_hostile_manifest_is_a_manifest_error_naming_file_and_key_path(
    tmp_path, text, key_path, reason
):
    path = tmp_path / "hostile.yaml"
    path.write_text(text, encoding="utf-8", errors="surrogatepass")
    before = snapshot()
    with pytest.raises(CommandError) as caught:
        call_command("apply_manifest", str(path), stdout=StringIO())
    message = str(caught.value)
    # A deep file's key path goes on past the prefix given here.
    assert message.startswith(f"{path}: {key_path}"), message
    assert reason in message
    assert "Traceback" not in message
    assert snapshot() == before


def test_the_alias_bomb_is_never_expanded():
    """Refused while composing: the parsed document never exists."""
    with pytest.raises(ManifestError) as caught:
        load_yaml(ALIAS_BOMB)
    assert caught.value.path == "b[0]"


def test_a_file_over_the_size_limit_is_refused_before_it_is_read(tmp_path):
    path = tmp_path / "huge.yaml"
    with path.open("wb") as out:
        out.truncate(MAX_MANIFEST_BYTES + 1)
    with pytest.raises(ManifestError, match="larger than"):
        read_manifest(path)


def test_an_unquoted_date_is_still_a_date():
    data = base_manifest()
    text = _dump(data).replace("'2026-09-30'", "2026-09-30")
    assert "asOf: 2026-09-30" in text
    from provisioning.manifest import parse_manifest

    manifest = parse_manifest(load_yaml(text))
    fact = manifest.tenants[0].knowledge[0].versions[0].documents[0].facts[0]
    assert fact.as_of.isoformat() == "2026-09-30"


def test_the_demo_manifest_still_applies():
    from pathlib import Path

    demo = Path(__file__).resolve().parents[2] / "demo" / "manifest.yaml"
    call_command("apply_manifest", str(demo), "--dry-run", stdout=StringIO())
