"""Evaluation set files: what is refused before anything runs, each error naming the file
and the key path; and the shipped sets' composition."""

import glob
import json
from collections import Counter
from pathlib import Path

import pytest

from evaluation.sets import (
    MAX_QUESTION_CHARS,
    MAX_QUESTIONS,
    EvaluationSetError,
    load_set,
    load_sets,
)

SETS = Path(__file__).resolve().parents[1] / "answers" / "sets"


def q(key: str, **fields) -> dict:
    return {"key": key, "question": f"{key} 是多少？", "expect": ["1"], **fields}


def refused(path: Path, where: str, message: str) -> EvaluationSetError:
    with pytest.raises(EvaluationSetError) as caught:
        load_set(path)
    error = caught.value
    assert error.file == str(path)
    assert error.path == where, str(error)
    assert message in error.message, str(error)
    assert str(error).startswith(f"{path}: {where}: ")
    return error


def test_a_good_set_loads_with_its_conversations_in_order(write_set):
    path = write_set(
        {
            "name": "good",
            "questions": [
                q("a", kind="direct", document="doc", page=2, sessionId="s"),
                q("b", kind="follow_up", follows="c"),
                q("c", follows="a"),
                {"key": "d", "question": "谁？", "notFound": True, "kind": "unanswerable"},
                q("e", expect=[48.6, "北辰医药", 64]),
            ],
        }
    )
    loaded = load_set(path)
    assert [x.key for x in loaded.questions] == ["a", "b", "c", "d", "e"]
    assert loaded.by_key["e"].expect == ("48.6", "北辰医药", "64")
    assert loaded.by_key["a"].page == 2 and loaded.by_key["d"].not_found
    # b follows c which follows a: one conversation (a's sessionId), a → c → b.
    assert {x.conversation for x in loaded.questions if x.key in "abc"} == {"s"}
    groups = [[x.key for x in group] for group in loaded.conversations()]
    assert groups == [["a", "c", "b"], ["d"], ["e"]]


def test_a_follows_chain_without_a_session_id_is_one_conversation_of_its_own(write_set):
    loaded = load_set(write_set({"name": "s", "questions": [q("a"), q("b", follows="a"), q("c")]}))
    assert loaded.by_key["a"].conversation == loaded.by_key["b"].conversation == "follows:a"
    assert loaded.by_key["c"].conversation == ""


def test_a_duplicated_key_is_refused_naming_both_items(write_set):
    path = write_set({"name": "s", "questions": [q("a"), q("b"), q("a")]})
    refused(path, "questions[2].key", "duplicated key 'a' (also questions[0].key)")


def test_an_unknown_follows_is_refused(write_set):
    path = write_set({"name": "s", "questions": [q("a"), q("b", follows="nobody")]})
    refused(path, "questions[1].follows", "no question has the key 'nobody'")


def test_a_follows_chain_with_a_loop_is_refused(write_set):
    path = write_set(
        {"name": "s", "questions": [q("a", follows="c"), q("b", follows="a"), q("c", follows="b")]}
    )
    refused(path, "questions[0].follows", "the follows-chain loops: a → c → b → a")


def test_a_question_that_follows_itself_is_a_loop(write_set):
    path = write_set({"name": "s", "questions": [q("a"), q("b", follows="b")]})
    refused(path, "questions[1].follows", "loops: b → b")


def test_a_question_over_100000_characters_is_refused(write_set):
    long = {"key": "long", "question": "问" * (MAX_QUESTION_CHARS + 1), "expect": ["1"]}
    path = write_set({"name": "s", "questions": [q("a"), long]})
    refused(path, "questions[1].question", "at most 100,000 characters long, got 100,001")
    exact = {"key": "long", "question": "问" * MAX_QUESTION_CHARS, "expect": ["1"]}
    assert len(load_set(write_set({"name": "s", "questions": [exact]})).questions) == 1


def test_more_than_5000_questions_are_refused(tmp_path):
    path = tmp_path / "many.json"
    many = [q(f"k{i}") for i in range(MAX_QUESTIONS + 1)]
    path.write_text(json.dumps({"name": "many", "questions": many}), encoding="utf-8")
    refused(path, "questions", "holds 5,001 questions; a set holds at most 5,000")
    path.write_text(json.dumps({"name": "many", "questions": many[:-1]}), encoding="utf-8")
    assert len(load_set(path).questions) == MAX_QUESTIONS


@pytest.mark.parametrize(
    ("question", "where", "message"),
    [
        (q("a", expect="48.6"), "questions[0].expect", "must be a list, got a string"),
        (q("a", expect=[]), "questions[0].expect", "at least one"),
        (q("a", expect=["48.6", True]), "questions[0].expect[1]", "got a boolean"),
        (q("a", expect=[{"x": 1}]), "questions[0].expect[0]", "got a mapping"),
        (q("a", notFound="yes"), "questions[0].notFound", "must be a boolean, got a string"),
        (q("a", document="d", page="2"), "questions[0].page", "must be an integer, got a string"),
        (q("a", document="d", page=0), "questions[0].page", "at least 1"),
        (q("a", page=2), "questions[0].page", "needs the document"),
        (q("a", kind="essay"), "questions[0].kind", "must be one of direct, list, table"),
        (q("a", sessionId=7), "questions[0].sessionId", "must be a string, got an integer"),
        (q("a", follows=["b"]), "questions[0].follows", "must be a string, got a list"),
        (q("a", expected=["1"]), "questions[0].expected", "unknown key"),
        ({"key": "a", "question": 5, "expect": ["1"]}, "questions[0].question", "got an integer"),
        ({"key": "", "question": "x", "expect": ["1"]}, "questions[0].key", "must not be empty"),
        ({"question": "x", "expect": ["1"]}, "questions[0].key", "is required"),
        ({"key": "a", "question": "x"}, "questions[0]", "says nothing to check"),
        (
            {"key": "a", "question": "x", "notFound": True, "expect": ["1"]},
            "questions[0].expect",
            "a notFound question expects no fact",
        ),
        (
            {"key": "a", "question": "x", "kind": "unanswerable"},
            "questions[0].notFound",
            "must say notFound: true",
        ),
        (q("a", kind="follow_up"), "questions[0]", "needs follows or sessionId"),
        ("just text", "questions[0]", "must be a mapping, got a string"),
    ],
)
def test_bad_types_and_shapes_are_refused_naming_the_item(write_set, question, where, message):
    refused(write_set({"name": "s", "questions": [question]}), where, message)


def test_the_fourth_item_is_named_by_its_index(write_set):
    questions = [q("a"), q("b"), q("c"), q("d", expect=["ok", None])]
    refused(write_set({"name": "s", "questions": questions}), "questions[3].expect[1]", "null")


def test_a_follow_up_with_another_session_than_its_conversation_is_refused(write_set):
    path = write_set(
        {"name": "s", "questions": [q("a", sessionId="s1"), q("b", follows="a", sessionId="s2")]}
    )
    refused(path, "questions[1].sessionId", "'s2' is not the conversation of questions[0]")


@pytest.mark.parametrize(
    ("data", "where", "message"),
    [
        ({"questions": [q("a")]}, "name", "is required"),
        ({"name": "s"}, "questions", "is required"),
        ({"name": "s", "questions": {}}, "questions", "must be a list, got a mapping"),
        ({"name": "s", "questions": []}, "questions", "at least one"),
        ({"name": "s", "questions": [q("a")], "owner": "x"}, "owner", "unknown key"),
        (["not", "a", "mapping"], "(top level)", "must be a mapping, got a list"),
    ],
)
def test_the_top_level_is_checked(write_set, tmp_path, data, where, message):
    path = tmp_path / "top.json"
    path.write_text(json.dumps(data, ensure_ascii=False), encoding="utf-8")
    refused(path, where, message)


def test_yaml_duplicate_mapping_keys_and_aliases_are_refused(tmp_path):
    duplicate = tmp_path / "dup.yaml"
    duplicate.write_text(
        "name: s\nquestions:\n  - {key: a, question: x, key: b, expect: ['1']}\n",
        encoding="utf-8",
    )
    refused(duplicate, "(top level)", "duplicate key 'key'")
    alias = tmp_path / "alias.yaml"
    alias.write_text(
        "name: s\nquestions:\n  - &q {key: a, question: x, expect: ['1']}\n  - *q\n",
        encoding="utf-8",
    )
    refused(alias, "questions[1]", "YAML aliases (*q) are not allowed")


def test_invalid_yaml_and_json_name_the_line(tmp_path):
    bad = tmp_path / "bad.yaml"
    bad.write_text("name: s\nquestions: [\n", encoding="utf-8")
    refused(bad, "(top level)", "invalid YAML at line")
    bad_json = tmp_path / "bad.json"
    bad_json.write_text('{"name": "s",}', encoding="utf-8")
    refused(bad_json, "(top level)", "invalid JSON at line 1")


def test_two_sets_may_not_share_a_name(write_set):
    first = write_set({"name": "same", "questions": [q("a")]}, "one.yaml")
    second = write_set({"name": "same", "questions": [q("a")]}, "two.yaml")
    with pytest.raises(EvaluationSetError, match="two.yaml: name: 'same' is also the name of"):
        load_sets([first, second])


def test_the_shipped_sets_cover_four_fixtures_every_kind_and_a_held_out_third():
    sets = load_sets(sorted(glob.glob(str(SETS / "*.yaml"))))
    questions = [x for s in sets for x in s.questions]
    kinds = Counter(x.kind for x in questions)
    fixtures = {s.fixture for s in sets}
    held_out = [x for s in sets if s.name.endswith("_heldout") for x in s.questions]
    assert len(questions) >= 120 and len(fixtures) >= 4
    assert set(kinds) == {
        "direct", "list", "table", "comparison", "follow_up", "unanswerable", "off_topic"
    }  # fmt: skip
    assert kinds["unanswerable"] / len(questions) >= 0.25
    assert 0.30 <= len(held_out) / len(questions) <= 0.37
    for s in sets:  # every fixture has both halves, and a held-out file is named so
        partner = s.name.removesuffix("_heldout")
        assert {partner, f"{partner}_heldout"} <= {t.name for t in sets}
        assert Path(s.path).stem == s.name
    # No question is asked in both halves of a fixture.
    for s in sets:
        if s.name.endswith("_heldout"):
            tuned = next(t for t in sets if t.name == s.name.removesuffix("_heldout"))
            assert not {x.question for x in s.questions} & {x.question for x in tuned.questions}
