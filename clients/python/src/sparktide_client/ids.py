"""The citation ID grammar, as the platform issues it (its one home is the server's
``foundation/ids.py``; ``tests/conformance/citation_ids.json`` pins this copy to it)."""

import re

CITATION_ID_RE = re.compile(r"cite_[a-z0-9]{24}")


def is_citation_id(value: object) -> bool:
    """True only for ``cite_`` + 24 characters of ``[a-z0-9]``: never a URI, a Markdown
    link, a truncated or upper-case ID, and never with surrounding whitespace."""
    return isinstance(value, str) and CITATION_ID_RE.fullmatch(value) is not None
