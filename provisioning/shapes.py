"""Reading YAML safely and checking the shape of each value, every error a
``ManifestError`` naming the key path (``tenants[0].apps[1].slug``) and why. No database."""

import os
import re
from collections.abc import Iterable
from datetime import UTC, date, datetime, time
from decimal import Decimal, InvalidOperation
from typing import Any
from urllib.parse import urlsplit

import yaml
from django.contrib.auth.validators import UnicodeUsernameValidator
from django.core.exceptions import ValidationError
from django.utils import timezone

from foundation.text_boundary import UnstorableText, refuse_unstorable
from provisioning.errors import ManifestError

SLUG = re.compile(r"^[-a-zA-Z0-9_]+$")
_ENV_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
_username_validator = UnicodeUsernameValidator()


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


def kind_of(value: Any) -> str:
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


def key_path(path: str, key: str | int) -> str:
    if isinstance(key, int):
        return f"{path}[{key}]"
    return f"{path}.{key}" if path else key


def read_mapping(
    value: Any, path: str, *, required: Iterable[str] = (), optional: Iterable[str] = ()
) -> dict[str, Any]:
    if not isinstance(value, dict):
        raise ManifestError(path, f"must be a mapping, got {kind_of(value)}")
    required, optional = tuple(required), tuple(optional)
    allowed = required + optional
    for key in value:
        if key not in allowed:
            raise ManifestError(
                key_path(path, str(key)), f"unknown key; expected one of: {', '.join(allowed)}"
            )
    for key in required:
        if key not in value:
            raise ManifestError(key_path(path, key), "is required")
    mapping: dict[str, Any] = value
    return mapping


def read_list(value: Any, path: str, *, default_empty: bool = True) -> list[Any]:
    if value is None and default_empty:
        return []
    if not isinstance(value, list):
        raise ManifestError(path, f"must be a list, got {kind_of(value)}")
    return value


def read_str(value: Any, path: str, *, max_length: int | None = None, empty: bool = False) -> str:
    if not isinstance(value, str):
        raise ManifestError(path, f"must be a string, got {kind_of(value)}")
    if not empty and not value.strip():
        raise ManifestError(path, "must not be empty")
    if max_length is not None and len(value) > max_length:
        raise ManifestError(path, f"must be at most {max_length} characters long")
    return value


def read_slug(value: Any, path: str) -> str:
    text = read_str(value, path, max_length=64)
    if not SLUG.match(text):
        raise ManifestError(path, f"must be a slug (letters, digits, - and _), got {text!r}")
    return text


def read_username(value: Any, path: str) -> str:
    text = read_str(value, path, max_length=150)
    try:
        _username_validator(text)
    except ValidationError:
        raise ManifestError(path, f"is not a valid username: {text!r}")
    return text


def read_version_label(value: Any, path: str) -> str:
    # YAML reads `version: 1` as an integer; accept it, but not a float, whose
    # text would change (2026.10 → "2026.1").
    if isinstance(value, int) and not isinstance(value, bool):
        return str(value)
    text = read_str(value, path, max_length=64)
    if "@" in text:
        raise ManifestError(path, "must not contain '@'")
    return text


def read_bool(value: Any, path: str) -> bool:
    if not isinstance(value, bool):
        raise ManifestError(path, f"must be true or false, got {kind_of(value)}")
    return value


def read_int(value: Any, path: str, *, minimum: int, maximum: int) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise ManifestError(path, f"must be an integer, got {kind_of(value)}")
    if not minimum <= value <= maximum:
        raise ManifestError(path, f"must be between {minimum} and {maximum}, got {value}")
    return value


def read_number(value: Any, path: str) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise ManifestError(path, f"must be a number, got {kind_of(value)}")
    return float(value)


def read_choice(value: Any, path: str, choices: Iterable[str]) -> str:
    choices = tuple(choices)
    if value not in choices:
        raise ManifestError(path, f"must be one of {', '.join(choices)}, got {value!r}")
    chosen: str = value
    return chosen


def refuse_duplicates(items: Iterable[tuple[str, str]], what: str) -> None:
    """items: (path, key); a key given twice is an error at its second path."""
    seen: set[str] = set()
    for path, key in items:
        if key in seen:
            raise ManifestError(path, f"duplicate {what} {key!r}")
        seen.add(key)


def secret_from_env(name: Any, path: str) -> str:
    name = read_str(name, path)
    if not _ENV_NAME.match(name):
        raise ManifestError(path, f"must be an environment variable name, got {name!r}")
    value = os.environ.get(name)
    if not value:
        raise ManifestError(path, f"environment variable {name} is not set")
    return value


def check_json_value(value: Any, path: str) -> None:
    """Model configs are stored as JSON: refuse YAML-only values (dates, sets…)."""
    if value is None or isinstance(value, bool | int | float | str):
        return
    if isinstance(value, list):
        for i, item in enumerate(value):
            check_json_value(item, key_path(path, i))
        return
    if isinstance(value, dict):
        for key, item in value.items():
            if not isinstance(key, str):
                raise ManifestError(path, f"keys must be strings, got {kind_of(key)}")
            check_json_value(item, key_path(path, key))
        return
    raise ManifestError(path, f"must be plain JSON data, got {kind_of(value)} (quote it)")


def _aware(moment: datetime) -> datetime:
    return moment if timezone.is_aware(moment) else moment.replace(tzinfo=UTC)


def read_datetime_or_null(value: Any, path: str) -> datetime | None:
    if value is None:
        return None
    if isinstance(value, datetime):
        return _aware(value)
    if isinstance(value, date):
        return datetime.combine(value, time.min, tzinfo=UTC)
    text = read_str(value, path)
    try:
        return _aware(datetime.fromisoformat(text))
    except ValueError:
        raise ManifestError(path, f"must be an ISO 8601 date-time or null, got {text!r}")


def read_date_or_null(value: Any, path: str) -> date | None:
    if value is None:
        return None
    if isinstance(value, datetime):
        raise ManifestError(path, "must be a date (YYYY-MM-DD), not a date-time")
    if isinstance(value, date):
        return value
    text = read_str(value, path)
    try:
        return date.fromisoformat(text)
    except ValueError:
        raise ManifestError(path, f"must be a date (YYYY-MM-DD), got {text!r}")


def read_decimal(value: Any, path: str) -> Decimal:
    if isinstance(value, bool) or not isinstance(value, int | float | str):
        raise ManifestError(path, f"must be a number, got {kind_of(value)}")
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


def read_http_url(value: Any, path: str) -> str:
    text = read_str(value, path, max_length=500)
    parts = urlsplit(text)
    if parts.scheme not in {"http", "https"} or not parts.hostname:
        raise ManifestError(path, f"must be an http(s) URL, got {text!r}")
    return text
