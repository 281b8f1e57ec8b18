"""Citation, numeric and block markers in answer text.

``[[cite:cite_…]]`` (and the legacy ``[cite_…]``) cite a source; ``[[num:…]]``
uses a numeric handle; ``[[block:pub_…]]`` inherits another block's sources.
A marker is only a claim: whether it resolves is decided against the evidence view.
"""

import re
from collections.abc import Iterable
from dataclasses import dataclass

CITE_MARKER = re.compile(r"\[\[cite:([^\[\]\s]{0,200})\]\]")
# Legacy form; "[cite_x](…)" is a Markdown link, not a marker.
LEGACY_CITE_MARKER = re.compile(r"(?<!\[)\[(cite_[A-Za-z0-9_\-]{0,200})\](?![\]\(])")
NUM_MARKER = re.compile(r"\[\[num:([^\[\]\s]{0,200})\]\]")
BLOCK_MARKER = re.compile(r"\[\[block:([^\[\]\s]{0,200})\]\]")
ANY_MARKER = re.compile(
    r"\[\[(?:cite|num|block):[^\[\]\s]{0,200}\]\]|" + LEGACY_CITE_MARKER.pattern
)


@dataclass(frozen=True)
class Markers:
    cited_ids: tuple[str, ...]  # distinct, in order of first appearance
    numeric_handles: tuple[str, ...]
    block_ids: tuple[str, ...]


def _distinct(values: Iterable[str]) -> tuple[str, ...]:
    return tuple(dict.fromkeys(values))


def cited_ids(text: str) -> tuple[str, ...]:
    found = [(m.start(), m.group(1)) for m in CITE_MARKER.finditer(text)]
    found += [(m.start(), m.group(1)) for m in LEGACY_CITE_MARKER.finditer(text)]
    return _distinct(value for _, value in sorted(found))


def parse_markers(text: str) -> Markers:
    return Markers(
        cited_ids=cited_ids(text),
        numeric_handles=_distinct(m.group(1) for m in NUM_MARKER.finditer(text)),
        block_ids=_distinct(m.group(1) for m in BLOCK_MARKER.finditer(text)),
    )
