"""Tiny typed readers for settings taken from the environment.

Every reader fails with ``ImproperlyConfigured`` naming the variable, so a bad
value stops the process at start instead of surfacing as a strange error later.
"""

import os
from urllib.parse import urlsplit
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from django.core.exceptions import ImproperlyConfigured

_TRUE = {"1", "true", "yes", "on"}
_FALSE = {"0", "false", "no", "off", ""}


def env_str(name: str, default: str = "") -> str:
    return os.environ.get(name, default)


def env_bool(name: str, default: bool = False) -> bool:
    raw = os.environ.get(name)
    if raw is None:
        return default
    value = raw.strip().lower()
    if value in _TRUE:
        return True
    if value in _FALSE:
        return False
    raise ImproperlyConfigured(f"{name} must be a boolean (1/0, true/false, yes/no), got {raw!r}")


def env_int(
    name: str, default: int, *, minimum: int | None = None, maximum: int | None = None
) -> int:
    raw = os.environ.get(name)
    if raw is None or raw.strip() == "":
        return default
    try:
        value = int(raw)
    except ValueError:
        raise ImproperlyConfigured(f"{name} must be an integer, got {raw!r}")
    if minimum is not None and value < minimum:
        raise ImproperlyConfigured(f"{name} must be at least {minimum}, got {value}")
    if maximum is not None and value > maximum:
        raise ImproperlyConfigured(f"{name} must be at most {maximum}, got {value}")
    return value


def env_float(name: str, default: float, *, minimum: float, maximum: float) -> float:
    raw = os.environ.get(name)
    if raw is None or raw.strip() == "":
        return default
    try:
        value = float(raw)
    except ValueError:
        raise ImproperlyConfigured(f"{name} must be a number, got {raw!r}")
    if not minimum <= value <= maximum:
        raise ImproperlyConfigured(f"{name} must be between {minimum} and {maximum}, got {value}")
    return value


def env_list(name: str, default: list[str] | None = None) -> list[str]:
    raw = os.environ.get(name)
    if raw is None:
        return list(default or [])
    items = [item.strip() for item in raw.split(",")]
    if any(not item for item in items) and raw.strip():
        raise ImproperlyConfigured(
            f"{name} must be a comma-separated list without empty items, got {raw!r}"
        )
    return [item for item in items if item]


def env_url(name: str, *, schemes: set[str]) -> str | None:
    raw = os.environ.get(name)
    if raw is None or raw.strip() == "":
        return None
    parts = urlsplit(raw)
    if parts.scheme not in schemes or not (parts.netloc or parts.path):
        expected = ", ".join(sorted(schemes))
        raise ImproperlyConfigured(f"{name} must be a URL with scheme {expected}, got {raw!r}")
    return raw


def env_time_zone(name: str, default: str) -> str:
    """An IANA time zone name (``Asia/Shanghai``), checked against the zone database."""
    value = os.environ.get(name, default).strip()
    try:
        ZoneInfo(value)
    except (ZoneInfoNotFoundError, ValueError):
        raise ImproperlyConfigured(
            f"{name} must be an IANA time zone such as Asia/Shanghai, got {value!r}"
        )
    return value
