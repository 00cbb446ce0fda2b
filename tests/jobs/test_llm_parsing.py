"""Strict parsing of list and label answers: every shape a model's answer takes."""

import pytest

from assessor.jobs.llm.parsing import (
    AnswerUnusable,
    parse_label_list,
    parse_nugget_list,
    parse_single_label,
    parse_string_list,
)

ASSIGN = ("support", "partial_support", "not_support")


def test_it_reads_a_json_list():
    assert parse_string_list('["a b", "c"]') == ["a b", "c"]


def test_it_reads_a_python_list_with_single_quotes():
    assert parse_string_list("['it is', \"Paris's river\"]") == ["it is", "Paris's river"]


def test_it_reads_a_fenced_list():
    assert parse_string_list('```python\n["x", "y"]\n```') == ["x", "y"]
    assert parse_string_list('```\n["x"]\n```') == ["x"]


def test_it_reads_an_unclosed_fence():
    assert parse_string_list('```json\n["x", "y"]') == ["x", "y"]


def test_it_reads_a_list_with_prose_around_it():
    raw = 'Sure, here are the nuggets: ["a [bracket] inside", "b"]. Let me know!'
    assert parse_string_list(raw) == ["a [bracket] inside", "b"]


def test_it_ignores_citation_brackets_in_prose():
    assert parse_string_list('From passage [1]: ["a", "b"]') == ["a", "b"]


def test_it_refuses_an_answer_without_a_list():
    with pytest.raises(AnswerUnusable, match="no list"):
        parse_string_list("support, not_support")


def test_it_refuses_two_lists():
    with pytest.raises(AnswerUnusable, match="several lists"):
        parse_string_list('["a"] or maybe ["b"]')


def test_it_refuses_non_strings():
    with pytest.raises(AnswerUnusable, match="item 2 is not a string"):
        parse_string_list('["a", 3]')


def test_it_refuses_too_many_nuggets_instead_of_cutting():
    with pytest.raises(AnswerUnusable, match="31 nuggets; it must have at most 30"):
        parse_nugget_list(str([f"n{i}" for i in range(31)]), max_nuggets=30)


def test_it_refuses_an_empty_nugget():
    with pytest.raises(AnswerUnusable, match="nugget 2 is empty"):
        parse_nugget_list('["a", "  "]', max_nuggets=30)


def test_it_accepts_an_empty_nugget_list():
    assert parse_nugget_list("[]", max_nuggets=30) == []


def test_it_reads_labels_up_to_case_and_spacing():
    raw = '["Support", "partial support", "NOT_SUPPORT", "partial-support"]'
    assert parse_label_list(raw, expected=4, allowed=ASSIGN) == [
        "support",
        "partial_support",
        "not_support",
        "partial_support",
    ]


def test_it_refuses_a_short_list():
    with pytest.raises(AnswerUnusable, match="has 2 labels; it must have exactly 3"):
        parse_label_list('["support", "support"]', expected=3, allowed=ASSIGN)


def test_it_refuses_a_long_list():
    with pytest.raises(AnswerUnusable, match="has 4 labels; it must have exactly 3"):
        parse_label_list(str(["support"] * 4), expected=3, allowed=ASSIGN)


def test_it_refuses_an_unknown_label_rather_than_guessing():
    with pytest.raises(AnswerUnusable, match=r"label 2 \('supported'\) is not one of"):
        parse_label_list('["support", "supported"]', expected=2, allowed=ASSIGN)


@pytest.mark.parametrize("raw", ["FS", " fs. ", '"FS"', "```\nFS\n```", "[FS]"])
def test_it_reads_a_single_label(raw):
    assert parse_single_label(raw, allowed=("FS", "PS", "NS")) == "FS"


@pytest.mark.parametrize("raw", ["FS or PS", "The label is FS", "", "full"])
def test_it_refuses_anything_but_one_label(raw):
    with pytest.raises(AnswerUnusable):
        parse_single_label(raw, allowed=("FS", "PS", "NS"))


def test_it_reads_grades():
    assert parse_single_label("2", allowed=("0", "1", "2", "3")) == "2"
    with pytest.raises(AnswerUnusable):
        parse_single_label("4", allowed=("0", "1", "2", "3"))
