"""The manifest's ``vocabulary:`` key (a tenant's, or one knowledge's): parsing,
validation and applying. ``manifest.py`` calls ``parse_vocabulary`` and
``apply_vocabulary``; the rules of a vocabulary are ``knowledge.vocabulary``'s.

    vocabulary:
      EPS: [基本每股收益]
      定增: [向特定对象发行, 募集资金]

A term maps to what the documents print instead; an empty, over-long (more than
``MAX_TERM_CHARS``) or cyclic entry is a ManifestError at its key path.
"""

from __future__ import annotations

from typing import Any

from knowledge.models import Knowledge, declare_vocabulary
from knowledge.vocabulary import VocabularyError, validate_entries
from provisioning.errors import ManifestError
from tenancy.models import Tenant


def parse_vocabulary(value: Any, path: str) -> dict[str, list[str]] | None:
    """The entries as ``knowledge.vocabulary`` folds them; None when the key is absent."""
    if value is None:
        return None
    try:
        return validate_entries(value).entries()
    except VocabularyError as exc:
        where = f"{path}.{exc.path}" if exc.path else path
        raise ManifestError(where, str(exc).removeprefix(f"{exc.path}: ")) from None


def apply_vocabulary(
    tenant: Tenant, knowledge: Knowledge | None, entries: dict[str, list[str]] | None
) -> bool:
    """Store the declared entries (replacing what was declared before); absent: kept.
    True if anything changed."""
    if entries is None:
        return False
    return declare_vocabulary(tenant, knowledge, entries)
