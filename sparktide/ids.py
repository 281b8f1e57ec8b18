"""Platform-issued identifiers: a readable prefix plus an unguessable suffix."""

import re
import secrets

# 20 bytes of randomness, URL-safe base32-ish alphabet (lowercase, no padding).
_ALPHABET = "abcdefghijklmnopqrstuvwxyz0123456789"
SUFFIX_LENGTH = 24
ID_PATTERN = r"[a-z0-9]{24}"


def new_id(prefix: str) -> str:
    return prefix + "".join(secrets.choice(_ALPHABET) for _ in range(SUFFIX_LENGTH))


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


CITATION_ID_RE = re.compile(rf"^cite_{ID_PATTERN}$")


def is_citation_id(value: str) -> bool:
    return bool(CITATION_ID_RE.match(value))
