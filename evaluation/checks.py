"""The mechanical checks of an answer's text, one home for the benchmark
(bench/answers.py) and the evaluation runner (evaluation/runner.py).

- ``numbers``: every number written in a text (ASCII or full-width digits,
  thousands separators), as decimals;
- ``figures_before_markers``: (figure, cite ID) for every number written since the
  previous marker — the figures a citation marker vouches for;
- ``holds``: an expected figure (compared as a decimal: ``16.0`` is ``16``) or phrase
  is in a text, markers removed;
- ``is_not_found``: the answer says it found nothing (the extractive provider's
  phrase, sparktide/agents/providers/extractive.py, or no text at all).
"""

from __future__ import annotations

import contextlib
import re
import unicodedata
from decimal import Decimal, InvalidOperation

MARKER = re.compile(r"\[\[(cite|num|block):([^\[\]\s]*)\]\]")
_NUMBER = re.compile(r"\d+(?:,\d{3})*(?:\.\d+)?")
# How the extractive provider begins every "not found" answer (NOT_FOUND and the
# variant naming what is missing both start so).
NOT_FOUND_PHRASE = "未在可用的知识版本中找到"


def numbers(text: str) -> list[Decimal]:
    """Every number written in ``text`` (ASCII or full-width digits), as a decimal."""
    out = []
    for match in _NUMBER.finditer(unicodedata.normalize("NFKC", text)):
        with contextlib.suppress(InvalidOperation):
            out.append(Decimal(match.group(0).replace(",", "")))
    return out


def figures_before_markers(text: str) -> list[tuple[Decimal, str]]:
    """(figure, cite ID) for every number written since the previous marker."""
    out: list[tuple[Decimal, str]] = []
    position = 0
    for marker in MARKER.finditer(text):
        segment = text[position : marker.start()]
        position = marker.end()
        if marker.group(1) == "cite":
            out += [(n, marker.group(2)) for n in numbers(segment)]
    return out


def cited_ids(text: str) -> list[str]:
    """The cite IDs of a text, each once, in order of first appearance."""
    return list(dict.fromkeys(m.group(2) for m in MARKER.finditer(text) if m.group(1) == "cite"))


def strip_markers(text: str) -> str:
    return MARKER.sub(" ", text)


def is_figure(expected: str) -> bool:
    """An expectation written as a bare figure (``48.6``, ``1,286.40``) is compared as a
    decimal; anything else (``-2.35%``, a name) as a substring."""
    return bool(_NUMBER.fullmatch(unicodedata.normalize("NFKC", expected).strip()))


def holds(text: str, expected: str) -> bool:
    """``expected`` (a figure or a phrase) is written in ``text``, markers removed."""
    body = unicodedata.normalize("NFKC", strip_markers(text))
    wanted = unicodedata.normalize("NFKC", expected).strip()
    if is_figure(wanted):
        return Decimal(wanted.replace(",", "")) in numbers(body)
    return wanted in body


def is_not_found(texts: list[str]) -> bool:
    """The answer says it found nothing: its first visible block holds the not-found
    phrase, or it has no visible text at all."""
    visible = [t for t in texts if t.strip()]
    return not visible or NOT_FOUND_PHRASE in visible[0]
