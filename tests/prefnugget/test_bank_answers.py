"""The bank prompts' answers read as the reference's converters read them, and the prompts as it sends them."""

from pathlib import Path

import pytest

from assessor.jobs.llm.parsing import AnswerUnusable
from prefnugget.prompts import FOLDER
from prefnugget.reading import Questions, extracted_read, query_only_read

SHARED_PROMPTS = Path(__file__).resolve().parents[3] / "shared" / "prompts" / "prefnugget"


def extraction(value: str) -> str:
    return (
        f"[[ ## reasoning ## ]]\nThe winner explains more.\n\n[[ ## differentiating_questions ## ]]\n{value}\n\n"
        "[[ ## confidence ## ]]\n0.6\n\n[[ ## completed ## ]]"
    )


def query_only(value: str) -> str:
    return f"[[ ## reasoning ## ]]\nr\n\n[[ ## questions ## ]]\n{value}\n\n[[ ## confidence ## ]]\nhigh"


@pytest.mark.parametrize(
    ("value", "questions"),
    [
        ('["Why do bees sting?", "Where is honey kept?", "How?"]', ["Why do bees sting?", "Where is honey kept?"]),
        ('["", "  Why?  ", " ", "How?"]', ["Why?", "How?"]),
        ("['What is nectar?']", ["What is nectar?"]),  # a Python literal, as DSPy reads one
        ('[1, "Why?"]', ["Why?"]),  # only strings are questions
        ("[]", []),
    ],
)
def test_an_extraction_keeps_the_first_two_non_empty_questions(value, questions):
    assert extracted_read(extraction(value)) == Questions(questions, "The winner explains more.", 0.6)


@pytest.mark.parametrize(
    ("raw", "reason"),
    [
        ("Why do bees sting?", "no \\[\\[ ## differentiating_questions ## \\]\\] section"),
        (extraction(""), "section is empty"),
        (extraction("null"), "holds NoneType"),  # the reference refuses None: the LLM did not follow instructions
        (extraction('"Why?"'), "holds str"),
        (extraction("Why? How?"), "not a JSON array"),
        (extraction('["Why?", '), "not a JSON array"),
    ],
)
def test_an_extraction_without_a_list_is_unusable(raw, reason):
    with pytest.raises(AnswerUnusable, match=reason):
        extracted_read(raw)


@pytest.mark.parametrize(
    ("value", "questions"),
    [
        ('[" Why? ", "", "How?", "Why?"]', ["Why?", "How?", "Why?"]),  # duplicates are dropped by the bank
        ("Why do leaves fall?\n\n  Will the tree be okay?  ", ["Why do leaves fall?", "Will the tree be okay?"]),
        ('{"q": 1}', ['{"q": 1}']),  # not a list: its lines, as the reference falls back
    ],
)
def test_a_query_only_answer_is_its_list_or_its_lines(value, questions):
    assert query_only_read(query_only(value)) == Questions(questions, "r", None)


def test_a_query_only_answer_without_its_section_is_unusable():
    with pytest.raises(AnswerUnusable, match="questions"):
        query_only_read("[[ ## reasoning ## ]]\nNothing to ask.")


@pytest.mark.skipif(not SHARED_PROMPTS.is_dir(), reason="the published prompts are in ../shared, not in this clone")
@pytest.mark.parametrize("stem", ["pn2_extract_iterative", "rubric_queryonly_generate"])
def test_the_system_messages_are_the_published_ones_byte_for_byte(stem):
    name = f"{stem}.system.txt"
    assert (FOLDER / name).read_bytes() == (SHARED_PROMPTS / name).read_bytes()
