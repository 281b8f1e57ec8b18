"""Evaluation sets: hand-written questions and what their answers must hold
(docs/evaluation.md).

``load_set(path)`` reads a YAML or JSON file and checks all of it before anything
runs; every problem is an ``EvaluationSetError`` naming the file and the key path
(``questions[3].expect[0]: …``), the way a manifest's errors do (docs/manifest.md).
Refused: unknown keys, bad types, a duplicated ``key``, a ``follows`` that names no
question or whose chain loops, a question over ``MAX_QUESTION_CHARS`` characters, more
than ``MAX_QUESTIONS`` questions, YAML aliases and duplicated mapping keys.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from foundation.strict_yaml import StrictYamlError, load_strict_yaml

MAX_QUESTIONS = 5_000
MAX_QUESTION_CHARS = 100_000
MAX_FILE_BYTES = 32 * 1024 * 1024
MAX_KEY_CHARS = 200
MAX_SESSION_CHARS = 120  # the runner prefixes it; Run.session_id holds 200

KINDS = (
    "direct",
    "list",
    "table",
    "comparison",
    "follow_up",
    "unanswerable",
    "off_topic",
)
NOT_FOUND_KINDS = ("unanswerable", "off_topic")
_SET_KEYS = ("name", "questions", "description", "fixture")
_QUESTION_KEYS = (
    "key",
    "question",
    "kind",
    "expect",
    "notFound",
    "document",
    "page",
    "sessionId",
    "follows",
    "note",
)


class EvaluationSetError(Exception):
    """A problem in a set file: which file, where (the key path) and why."""

    def __init__(self, file: str, path: str, message: str) -> None:
        self.file = file
        self.path = path or "(top level)"
        self.message = message
        super().__init__(f"{file}: {self.path}: {message}")


@dataclass(frozen=True)
class Question:
    index: int
    key: str
    question: str
    kind: str = ""
    expect: tuple[str, ...] = ()
    not_found: bool = False
    document: str = ""
    page: int | None = None
    session_id: str = ""  # as written
    follows: str = ""
    note: str = ""
    # The conversation it belongs to: its sessionId, the one it inherits through
    # ``follows``, or "" (a question asked on its own).
    conversation: str = ""

    @property
    def path(self) -> str:
        return f"questions[{self.index}]"


@dataclass(frozen=True)
class EvaluationSet:
    name: str
    path: Path
    questions: tuple[Question, ...]
    description: str = ""
    fixture: str = ""
    by_key: dict[str, Question] = field(default_factory=dict, compare=False, repr=False)
    # The set as written (checked): what a kept evaluation stores and its digest covers.
    data: Any = field(default=None, compare=False, repr=False)

    def conversations(self) -> list[list[Question]]:
        """The questions as units of work: a conversation's questions together, each after
        the one it follows (file order otherwise); a question on its own alone."""
        groups: dict[str, list[Question]] = {}
        order: list[list[Question]] = []
        for q in self.questions:
            if not q.conversation:
                order.append([q])
                continue
            if q.conversation not in groups:
                groups[q.conversation] = []
                order.append(groups[q.conversation])
            groups[q.conversation].append(q)
        return [_followed_first(group) for group in order]


def _followed_first(group: list[Question]) -> list[Question]:
    keys = {q.key for q in group}
    done: set[str] = set()
    out: list[Question] = []
    pending = list(group)
    while pending:
        for q in pending:
            if not q.follows or q.follows in done or q.follows not in keys:
                out.append(q)
                done.add(q.key)
                pending.remove(q)
                break
        else:  # unreachable: loops are refused when the set is loaded
            out += pending
            break
    return out


# --------------------------------------------------------------------------- reading


def read_data(text: str, file: str) -> Any:
    """The file's data: JSON for a ``.json`` file, strict YAML otherwise."""
    if file.endswith(".json"):
        try:
            return json.loads(text, object_pairs_hook=lambda pairs: _unique(pairs, file))
        except json.JSONDecodeError as exc:
            raise EvaluationSetError(
                file, "", f"invalid JSON at line {exc.lineno}, column {exc.colno}: {exc.msg}"
            )
    try:
        return load_strict_yaml(text)
    except StrictYamlError as exc:
        raise EvaluationSetError(file, exc.path, exc.message)


def _unique(pairs: list[tuple[str, Any]], file: str) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for key, value in pairs:
        if key in out:
            raise EvaluationSetError(file, "", f"invalid JSON: duplicate key {key!r}")
        out[key] = value
    return out


def load_set(path: Path | str) -> EvaluationSet:
    path = Path(path)
    file = str(path)
    try:
        if path.stat().st_size > MAX_FILE_BYTES:
            raise EvaluationSetError(file, "", f"the file is larger than {MAX_FILE_BYTES} bytes")
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise EvaluationSetError(file, "", f"cannot read the file: {exc.strerror or exc}")
    except UnicodeDecodeError:
        raise EvaluationSetError(file, "", "the file is not UTF-8 text")
    return parse_set(read_data(text, file), path)


def load_sets(paths: Iterable[Path | str]) -> list[EvaluationSet]:
    """Every file loaded and checked before any is run; two sets may not share a name."""
    sets: list[EvaluationSet] = []
    names: dict[str, str] = {}
    for path in paths:
        loaded = load_set(path)
        if loaded.name in names:
            raise EvaluationSetError(
                str(path), "name", f"{loaded.name!r} is also the name of {names[loaded.name]}"
            )
        names[loaded.name] = str(path)
        sets.append(loaded)
    return sets


# --------------------------------------------------------------------------- checking


def _kind_of(value: Any) -> str:
    if value is None:
        return "null"
    return {
        bool: "a boolean",
        int: "an integer",
        float: "a number",
        str: "a string",
        list: "a list",
        dict: "a mapping",
    }.get(type(value), type(value).__name__)


class _Checker:
    def __init__(self, file: str) -> None:
        self.file = file

    def fail(self, path: str, message: str) -> EvaluationSetError:
        return EvaluationSetError(self.file, path, message)

    def mapping(
        self, value: Any, path: str, required: tuple[str, ...], allowed: tuple[str, ...]
    ) -> dict[str, Any]:
        if not isinstance(value, dict):
            raise self.fail(path, f"must be a mapping, got {_kind_of(value)}")
        for key in value:
            if key not in allowed:
                where = f"{path}.{key}" if path else str(key)
                raise self.fail(where, f"unknown key; expected one of: {', '.join(allowed)}")
        for key in required:
            if key not in value:
                raise self.fail(f"{path}.{key}" if path else key, "is required")
        return value

    def string(self, value: Any, path: str, *, limit: int | None = None) -> str:
        if not isinstance(value, str):
            raise self.fail(path, f"must be a string, got {_kind_of(value)}")
        if not value.strip():
            raise self.fail(path, "must not be empty")
        if limit is not None and len(value) > limit:
            raise self.fail(path, f"must be at most {limit:,} characters long, got {len(value):,}")
        return value


def parse_set(data: Any, path: Path | str) -> EvaluationSet:
    file = str(path)
    check = _Checker(file)
    top = check.mapping(data, "", ("name", "questions"), _SET_KEYS)
    name = check.string(top["name"], "name", limit=MAX_KEY_CHARS)
    description = check.string(top["description"], "description") if "description" in top else ""
    fixture = check.string(top["fixture"], "fixture") if "fixture" in top else ""
    raw = top["questions"]
    if not isinstance(raw, list):
        raise check.fail("questions", f"must be a list, got {_kind_of(raw)}")
    if not raw:
        raise check.fail("questions", "must hold at least one question")
    if len(raw) > MAX_QUESTIONS:
        raise check.fail(
            "questions", f"holds {len(raw):,} questions; a set holds at most {MAX_QUESTIONS:,}"
        )
    questions = [_question(check, item, i) for i, item in enumerate(raw)]
    by_key: dict[str, Question] = {}
    for q in questions:
        if q.key in by_key:
            raise check.fail(
                f"{q.path}.key", f"duplicated key {q.key!r} (also {by_key[q.key].path}.key)"
            )
        by_key[q.key] = q
    for q in questions:
        if q.follows and q.follows not in by_key:
            raise check.fail(f"{q.path}.follows", f"no question has the key {q.follows!r}")
    for q in questions:
        _refuse_loop(check, q, by_key)
    questions = [_with_conversation(check, q, by_key) for q in questions]
    return EvaluationSet(
        name=name,
        path=Path(path),
        questions=tuple(questions),
        description=description,
        fixture=fixture,
        by_key={q.key: q for q in questions},
        data=data,
    )


def _question(check: _Checker, item: Any, index: int) -> Question:
    path = f"questions[{index}]"
    data = check.mapping(item, path, ("key", "question"), _QUESTION_KEYS)
    key = check.string(data["key"], f"{path}.key", limit=MAX_KEY_CHARS)
    text = check.string(data["question"], f"{path}.question", limit=MAX_QUESTION_CHARS)
    kind = ""
    if "kind" in data:
        kind = check.string(data["kind"], f"{path}.kind")
        if kind not in KINDS:
            raise check.fail(f"{path}.kind", f"must be one of {', '.join(KINDS)}, got {kind!r}")
    expect: list[str] = []
    if "expect" in data:
        raw = data["expect"]
        if not isinstance(raw, list):
            raise check.fail(f"{path}.expect", f"must be a list, got {_kind_of(raw)}")
        if not raw:
            raise check.fail(f"{path}.expect", "must hold at least one expected text or figure")
        for i, value in enumerate(raw):
            where = f"{path}.expect[{i}]"
            if isinstance(value, bool) or not isinstance(value, str | int | float):
                raise check.fail(where, f"must be a string or a figure, got {_kind_of(value)}")
            expect.append(check.string(str(value), where, limit=MAX_QUESTION_CHARS))
    not_found = False
    if "notFound" in data:
        not_found = data["notFound"]
        if not isinstance(not_found, bool):
            raise check.fail(f"{path}.notFound", f"must be a boolean, got {_kind_of(not_found)}")
    document = ""
    if "document" in data:
        document = check.string(data["document"], f"{path}.document", limit=MAX_KEY_CHARS)
    page = None
    if "page" in data:
        page = data["page"]
        if isinstance(page, bool) or not isinstance(page, int):
            raise check.fail(f"{path}.page", f"must be an integer, got {_kind_of(page)}")
        if page < 1:
            raise check.fail(f"{path}.page", f"must be at least 1, got {page}")
        if not document:
            raise check.fail(f"{path}.page", "needs the document the page belongs to")
    session_id = ""
    if "sessionId" in data:
        session_id = check.string(data["sessionId"], f"{path}.sessionId", limit=MAX_SESSION_CHARS)
    follows = ""
    if "follows" in data:
        follows = check.string(data["follows"], f"{path}.follows", limit=MAX_KEY_CHARS)
    note = check.string(data["note"], f"{path}.note") if "note" in data else ""
    if not_found:
        for name, given in (("expect", expect), ("document", document)):
            if given:
                raise check.fail(
                    f"{path}.{name}", "a notFound question expects no fact and cites nothing"
                )
    if kind in NOT_FOUND_KINDS and not not_found:
        raise check.fail(f"{path}.notFound", f"a question of kind {kind} must say notFound: true")
    if not not_found and not expect and not document:
        raise check.fail(path, "says nothing to check: give expect, document or notFound: true")
    if kind == "follow_up" and not (follows or session_id):
        raise check.fail(path, "a follow_up question needs follows or sessionId")
    return Question(
        index=index,
        key=key,
        question=text,
        kind=kind,
        expect=tuple(expect),
        not_found=not_found,
        document=document,
        page=page,
        session_id=session_id,
        follows=follows,
        note=note,
    )


def _refuse_loop(check: _Checker, q: Question, by_key: dict[str, Question]) -> None:
    chain = [q.key]
    current = q
    while current.follows:
        if current.follows in chain:
            loop = " → ".join([*chain[chain.index(current.follows) :], current.follows])
            raise check.fail(f"{q.path}.follows", f"the follows-chain loops: {loop}")
        chain.append(current.follows)
        current = by_key[current.follows]


def _conversation(q: Question, by_key: dict[str, Question], followed: set[str]) -> str:
    """The conversation a question is asked in: the one of the question it follows
    (the chain's first question's sessionId, else its key), else its own sessionId."""
    if q.follows:
        return _conversation(by_key[q.follows], by_key, followed)
    if q.session_id:
        return q.session_id
    return f"follows:{q.key}" if q.key in followed else ""


def _with_conversation(check: _Checker, q: Question, by_key: dict[str, Question]) -> Question:
    followed = {other.follows for other in by_key.values() if other.follows}
    conversation = _conversation(q, by_key, followed)
    if q.follows and q.session_id and q.session_id != conversation:
        first = by_key[q.follows]
        while first.follows:
            first = by_key[first.follows]
        raise check.fail(
            f"{q.path}.sessionId",
            f"{q.session_id!r} is not the conversation of {first.path} ({first.key!r}), "
            "which its follows-chain starts from: a follow-up is asked in the conversation "
            "it follows (give the sessionId there, or leave it out here)",
        )
    return Question(**{**q.__dict__, "conversation": conversation})
