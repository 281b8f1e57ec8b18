"""The one storage boundary for text that comes from outside SparkTide.

PostgreSQL cannot hold U+0000 in ``text`` or ``jsonb``, and no UTF-8 column can
hold a lone surrogate (U+D800–U+DFFF, which ``json.loads`` and YAML escapes
happily produce). SQLite stores both, so without this boundary the same input
works on the embedded default and ends in a ``DataError`` on PostgreSQL.

Every source of outside text passes here before it is written; what each one
does with a refusal is decided per source (docs/errors.md, "Text the database
cannot hold"):

* ``refuse`` — client input (REST bodies), manifest values and REMOTE items:
  the caller names the field and the input is refused, nothing written.
* ``storable`` — model output (Publication candidates, tool arguments in the
  journal): the model is not a party one can send a 400 to, so the characters
  are removed and the rest is kept.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

# NUL and any surrogate code point (paired surrogates never appear in a Python
# str: they are always decoded into one astral code point).
_UNSTORABLE = re.compile("[\x00\ud800-\udfff]")


class UnstorableText(ValueError):
    """Text at ``path`` holds a character the database cannot store."""

    def __init__(self, path: str, char: str) -> None:
        self.path = path
        self.char = char
        what = "NUL (U+0000)" if char == "\x00" else f"a lone surrogate (U+{ord(char):04X})"
        self.reason = f"contains {what}, which cannot be stored"
        super().__init__(f"{path or '(value)'} {self.reason}")


def first_unstorable(text: str) -> str | None:
    match = _UNSTORABLE.search(text)
    return match.group() if match else None


def is_storable(text: str) -> bool:
    return _UNSTORABLE.search(text) is None


def storable(text: str) -> str:
    """``text`` without the characters the database cannot store (model output)."""
    return _UNSTORABLE.sub("", text)


def refuse_unstorable(value: Any, path: str = "") -> None:
    """Raise ``UnstorableText`` naming the first string (or key) in ``value`` —
    a str, or JSON-like lists and mappings of them — the database cannot store.
    Iterative, so the depth of ``value`` costs no stack."""
    for where, text in _strings(value, path):
        char = first_unstorable(text)
        if char is not None:
            raise UnstorableText(where, char)


def storable_json(value: Any) -> Any:
    """A copy of JSON-like ``value`` with every string (and key) made storable."""
    if isinstance(value, str):
        return storable(value)
    if isinstance(value, dict):
        return {storable_json(k): storable_json(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [storable_json(v) for v in value]
    return value


def _strings(value: Any, path: str) -> Iterator[tuple[str, str]]:
    stack: list[tuple[str, Any]] = [(path, value)]
    while stack:
        where, item = stack.pop()
        if isinstance(item, str):
            yield where, item
        elif isinstance(item, dict):
            for key, child in reversed(list(item.items())):
                child_path = f"{where}.{key}" if where else str(key)
                if isinstance(key, str):
                    yield child_path, key
                stack.append((child_path, child))
        elif isinstance(item, list | tuple):
            for index in range(len(item) - 1, -1, -1):
                stack.append((f"{where}[{index}]", item[index]))
