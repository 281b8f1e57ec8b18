"""Reading YAML safely and checking the shape of each value, every error a
``ManifestError`` naming the key path (``tenants[0].apps[1].slug``) and why. No database."""

import os
import re
from collections.abc import Iterable
from datetime import UTC, date, datetime, time
from decimal import Decimal, InvalidOperation
from typing import Any
from urllib.parse import urlsplit

from django.contrib.auth.validators import UnicodeUsernameValidator
from django.core.exceptions import ValidationError
from django.utils import timezone

from foundation.strict_yaml import StrictYamlError, load_strict_yaml
from foundation.text_boundary import UnstorableText, refuse_unstorable
from provisioning.errors import ManifestError

SLUG = re.compile(r"^[-a-zA-Z0-9_]+$")
_ENV_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
_username_validator = UnicodeUsernameValidator()


# --------------------------------------------------------------------------- YAML


# Parser limit: a manifest is hand-written provisioning data, so this is not near an honest
# file, and it keeps a hostile one from costing time (nesting: foundation/strict_yaml.py).
MAX_MANIFEST_BYTES = 8 * 1024 * 1024


def load_yaml(text: str) -> Any:
    """The YAML document, with every string checked at the storage boundary."""
    if len(text) > MAX_MANIFEST_BYTES:
        raise ManifestError("", f"the manifest is larger than {MAX_MANIFEST_BYTES} bytes")
    try:
        data = load_strict_yaml(text)
    except StrictYamlError as exc:
        raise ManifestError(exc.path, exc.message)
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
