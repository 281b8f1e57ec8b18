"""Platform-issued identifiers: a readable prefix plus an unguessable suffix."""

import re
import secrets
from typing import TypeGuard

_ALPHABET = "abcdefghijklmnopqrstuvwxyz0123456789"
SUFFIX_LENGTH = 24
ID_PATTERN = r"[a-z0-9]{24}"


def new_id(prefix: str) -> str:
    # 24 base-36 digits ≈ 124 bits; the rejection of bytes ≥ 252 keeps digits uniform.
    digits: list[str] = []
    while len(digits) < SUFFIX_LENGTH:
        digits.extend(_ALPHABET[b % 36] for b in secrets.token_bytes(SUFFIX_LENGTH) if b < 252)
    return prefix + "".join(digits[:SUFFIX_LENGTH])


def new_run_id() -> str:
    return new_id("run_")


def new_citation_id() -> str:
    return new_id("cite_")


def new_publication_id() -> str:
    return new_id("pub_")


def new_numeric_handle() -> str:
    return new_id("num_")


def new_candidate_id() -> str:
    return new_id("cand_")


CITATION_ID_RE = re.compile(rf"cite_{ID_PATTERN}")


def is_citation_id(value: object) -> TypeGuard[str]:
    """The one grammar of a citation ID; tests/conformance/citation_ids.json pins every
    client's copy of it (Python, Java, the browser SDK) to this one."""
    # fullmatch, not ^…$: ``$`` also matches before a trailing newline.
    return isinstance(value, str) and CITATION_ID_RE.fullmatch(value) is not None
