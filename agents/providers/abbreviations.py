"""Short forms of Chinese terms (缩略语), read by how they are made.

A Chinese abbreviation keeps, in order, the first character of some of a term's words —
sometimes more of a word — and leaves the rest out: 扣非净利 is 扣除非经常性损益后的净利润
(扣…非…净利), 归母净利 is 归属于母公司股东的净利润, 董秘 is 董事会秘书, 债基 is 债券基金.
``abbreviated`` finds the term a short form stands for in a text by that rule alone, over
the text's words (jieba's dictionary segmentation, without its guesser), so the reader
needs no list of abbreviations to know one it has never seen. Its last word is the term's
head: 净利 stands for 净利润, never for 净利润增长率 (率 is not the first character of
增长率), and a term is read inside one noun phrase — no figure, punctuation or conjunction
between its words (净资产 is not 净利润和资产).
"""

from __future__ import annotations

import logging
import re
from functools import cache, lru_cache

import jieba

jieba.setLogLevel(logging.WARNING)

# A noun phrase's extent: Chinese characters only, cut at a conjunction of two things.
_PHRASES = re.compile(r"[\u4e00-\u9fff]+")
_CONJUNCTIONS = re.compile(r"[和与及或、]")
# How far a short form may stretch: words left out in all, and characters in the term.
MAX_LEFT_OUT = 4
MAX_TERM = 16


@lru_cache(maxsize=8192)
def _words(phrase: str) -> tuple[str, ...]:
    return tuple(jieba.cut(phrase, HMM=False))


def word_starts(phrase: str) -> frozenset[int]:
    """Where the words of ``phrase`` begin (the same dictionary segmentation): 副 begins a
    word of 董事会副董事长, 今 ends one of 年初至今研发费用 (至今)."""
    starts, at = set(), 0
    for word in _words(phrase):
        starts.add(at)
        at += len(word)
    return frozenset(starts)


def abbreviated(short: str, text: str) -> str:
    """The term of ``text`` that ``short`` abbreviates (not ``short`` written whole), or
    "". ``short``: Chinese characters only, at least two."""
    if len(short) < 2 or not _PHRASES.fullmatch(short) or short[0] not in text:
        return ""
    for phrase in _PHRASES.findall(text):
        for part in _CONJUNCTIONS.split(phrase):
            if short[0] in part and short not in part and (term := _in_words(short, _words(part))):
                return term
    return ""


def _in_words(short: str, words: tuple[str, ...]) -> str:
    for first, word in enumerate(words):
        if word[0] == short[0]:
            end = _align(short, words, first)
            if end:
                term = "".join(words[first:end])
                if len(term) <= MAX_TERM:
                    return term
    return ""


def _align(short: str, words: tuple[str, ...], first: int) -> int:
    """The index after the last word of a term starting at word ``first`` that ``short``
    abbreviates, or 0: each word the term keeps gives its first character and may give
    more of its characters, in order; a word it leaves out gives none; the short form's
    last character lies in the term's last word."""

    @cache
    def step(i: int, w: int, c: int, left_out: int) -> int:
        # short[i:] still to place, at word w after its first c characters (c > 0: kept)
        if i == len(short):
            return w + 1 if c else 0  # the rest of the word that took the last completes it
        if w == len(words) or left_out > MAX_LEFT_OUT:
            return 0
        word = words[w]
        if c == len(word):
            return step(i, w + 1, 0, left_out)
        if c == 0:
            kept = step(i + 1, w, 1, left_out) if word[0] == short[i] else 0
            return kept or (step(i, w + 1, 0, left_out + 1) if w > first else 0)
        taken = step(i + 1, w, c + 1, left_out) if word[c] == short[i] else 0
        return taken or step(i, w, c + 1, left_out)

    return step(0, first, 0, 0)
