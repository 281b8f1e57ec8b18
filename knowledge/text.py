"""Text rules shared by ingestion, retrieval, preview and the extractive reader: UTF-16
lengths, snippet normalization and digests, the search tokenizer, section headings."""

import hashlib
import re
import unicodedata
from collections import Counter

MAX_CHUNK_UTF16 = 16_384
# The longest search token counted and searched: an ASCII "word" longer than this
# (a hash, a run of digits) is no word anyone asks for, and statistics store tokens
# in a bounded column.
MAX_TOKEN_CHARS = 64
PAGE_SEPARATOR = "\n\n"
# What marks a token a chunk holds more than once (``search_marks``): no search token
# holds it (they are CJK runs and [0-9a-z.] words), so a mark is never a token.
MARK = "~"


# A numbered section heading (第三节 …, 二、…, （二）…, §2 …, # …), or a line of nothing but
# a bold phrase, as Markdown notes head a part (**风险提示**：): chunking keeps it with what it
# heads; the extractive reader ends a table or a list at it. (A bold line saying something —
# **投资评级：买入（维持）** — is a statement, not a heading.)
SECTION_HEADING = re.compile(
    r"^(?:第[一二三四五六七八九十百\d]+[节章部分]|§\s*\d+|[一二三四五六七八九十]+、"
    r"|[（(][一二三四五六七八九十]+[)）]|#+\s|\*\*[^*\n，。：:；;,]{1,24}\*\*[：:]?\s*$)"
)


def utf16_len(text: str) -> int:
    return len(text.encode("utf-16-le")) // 2


def utf16_slice(text: str, start: int, end: int) -> str:
    return text.encode("utf-16-le")[start * 2 : end * 2].decode("utf-16-le")


def normalize_snippet(text: str) -> str:
    """NFC, line endings unified to \\n, surrounding whitespace trimmed."""
    text = unicodedata.normalize("NFC", text)
    text = text.replace("\r\n", "\n").replace("\r", "\n")
    return text.strip()


def snippet_digest(text: str) -> str:
    return hashlib.sha256(normalize_snippet(text).encode()).hexdigest()


_CJK = re.compile(
    r"[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af\uf900-\ufaff\U00020000-\U0002fa1f]+"
)
_WORD = re.compile(r"[0-9a-z]+(?:\.[0-9]+)?")


def search_tokens(text: str) -> list[str]:
    """Tokens for search: overlapping CJK character bigrams plus ASCII words.

    Chinese has no spaces, and a whole CJK run as one token would make a two-
    character query like 营收 unfindable; bigrams make it a token of its own.
    A lone CJK character is kept as a unigram so one-character queries work.
    """
    text = unicodedata.normalize("NFKC", text).lower()
    tokens: list[str] = []
    for run in _CJK.findall(text):
        if len(run) == 1:
            tokens.append(run)
        else:
            tokens.extend(run[i : i + 2] for i in range(len(run) - 1))
    tokens.extend(_WORD.findall(_CJK.sub(" ", text)))
    return tokens


def search_marks(tokens: list[str]) -> str:
    """The marks of the tokens ``tokens`` holds more than once (each token prefixed with
    ``MARK``), space-separated, in order of first occurrence: stored beside a chunk's
    ``search_text`` and read with each candidate, so a search can bound its score
    before counting its tokens (``ranking.Bm25.reaches``). Tokens over
    ``MAX_TOKEN_CHARS`` are never searched, so never marked."""
    return " ".join(
        marked(token)
        for token, n in Counter(tokens).items()
        if n >= 2 and len(token) <= MAX_TOKEN_CHARS
    )


def marked(token: str) -> str:
    """The mark of ``token``: what a chunk holding it at least twice also holds."""
    return MARK + token
