"""The bank prompts' answers read as the reference reads them (minima-llm 0.2.8's TolerantChatAdapter, then the
starter kit's converters), checked by hand and against the installed adapter itself; the prompts as sent."""

from functools import partial
from pathlib import Path

import pytest

from assessor.jobs.llm.parsing import AnswerUnusable
from prefnugget.prompts import FOLDER
from prefnugget.reading import (
    EXTRACT_FIELDS,
    QUERY_ONLY_FIELDS,
    Questions,
    extracted_read,
    query_only_read,
)
from reports.chat_layout import answer_fields
from tests import minima_reference
from tests.minima_reference import PACKAGE, AdapterParseError, adapter_file, tolerant_chat_adapter

SHARED_PROMPTS = Path(__file__).resolve().parents[3] / "shared" / "prompts" / "prefnugget"
REASK = None  # the adapter (or the converter after it) refuses the answer: it is asked again

needs_adapter = pytest.mark.skipif(
    adapter_file() is None, reason=f"the reference adapter's package {PACKAGE} is not installed"
)


def extraction(value: str, *, confidence: str = "0.6", reasoning: str = "The winner explains more.") -> str:
    return (
        f"[[ ## reasoning ## ]]\n{reasoning}\n\n[[ ## differentiating_questions ## ]]\n{value}\n\n"
        f"[[ ## confidence ## ]]\n{confidence}\n\n[[ ## completed ## ]]"
    )


def query_only(value: str, *, confidence: str = "0.9") -> str:
    return f"[[ ## reasoning ## ]]\nr\n\n[[ ## questions ## ]]\n{value}\n\n[[ ## confidence ## ]]\n{confidence}"


# (case, answer, the questions kept worked by hand from the adapter's rules and the converter's, or REASK)
EXTRACTIONS = [
    (
        "a JSON array",
        extraction('["Why do bees sting?", "Where is honey kept?", "How?"]'),
        ["Why do bees sting?", "Where is honey kept?"],
    ),
    ("empty items dropped", extraction('["", "  Why?  ", " ", "How?"]'), ["Why?", "How?"]),
    # Every item that is not null, 0, false or empty is read as text: 1 is the question "1".
    ("items of other types", extraction('[1, null, 0, false, "Why?", ["x"]]'), ["1", "Why?"]),
    ("an empty array", extraction("[]"), []),
    ("a multi-line array", extraction('[\n  "Why?",\n\n    "How?"\n]'), ["Why?", "How?"]),
    ("a Python list", extraction("['What is nectar?', 'Why?']"), ["What is nectar?", "Why?"]),
    ("a Python list, trailing comma", extraction("['Why?', 'How?',]"), ["Why?", "How?"]),
    ("a Python list, escaped apostrophe", extraction("['Isn\\'t it sweet?']"), ["Isn't it sweet?"]),
    (
        "headers in another case and spacing",
        extraction('["Why?"]')
        .replace("[[ ## differentiating_questions ## ]]", "[[## Differentiating Questions ##]]")
        .replace("[[ ## confidence ## ]]", "[[  ##CONFIDENCE##  ]]"),
        ["Why?"],
    ),
    (
        "a header inside a line",
        'Reasoning first. [[ ## reasoning ## ]] r [[ ## differentiating_questions ## ]] ["Why?"]\n[[ ## confidence ## ]] 0.5',
        ["Why?"],
    ),
    (
        "a field given twice, the second null",
        extraction('["Why?"]') + "\n[[ ## differentiating_questions ## ]]\nnull",
        ["Why?"],
    ),
    (
        "a field given twice, the second a list",
        extraction('["Why?"]') + '\n[[ ## differentiating_questions ## ]]\n["How?"]',
        ["How?"],
    ),
    ("a confidence with words", extraction('["Why?"]', confidence="0.8 (fairly sure)"), ["Why?"]),
    ("a fenced JSON block", extraction('```json\n["Why?"]\n```'), REASK),
    ("null", extraction("null"), REASK),  # the converter refuses None: "LLM did not follow instructions"
    ("None", extraction("None"), REASK),
    ("a field saying none", extraction("NONE"), REASK),
    ("an empty field", extraction(""), REASK),
    ("numbered lines", extraction("1. Why do bees sting?\n2. Where is honey kept?"), REASK),
    ("a JSON array, trailing comma", extraction('["Why?", "How?",]'), REASK),
    ("mixed quotes", extraction("[\"Why?\", 'How?']"), REASK),
    ("an apostrophe in single quotes", extraction("['Isn't it sweet?']"), REASK),
    ("a bare string", extraction('"Why?"'), REASK),
    ("a JSON object", extraction('{"q": "Why?"}'), REASK),
    ("an unclosed array", extraction('["Why?", '), REASK),
    ("no sections", "Why do bees sting?", REASK),
    (
        "a hyphen in the header",
        extraction('["Why?"]').replace("differentiating_questions", "differentiating-questions"),
        REASK,
    ),
    ("a confidence in words", extraction('["Why?"]', confidence="high"), REASK),
    ("no confidence", extraction('["Why?"]').replace("[[ ## confidence ## ]]\n0.6", ""), REASK),
    ("a reasoning saying null", extraction('["Why?"]', reasoning="null"), REASK),
]

QUERY_ONLY = [
    ("a JSON array", query_only('[" Why? ", "", "How?", "Why?"]'), ["Why?", "How?", "Why?"]),  # the bank drops repeats
    ("a Python list", query_only("['Why?']"), ["Why?"]),
    ("an empty array", query_only("[]"), []),
    ("a blank item", query_only('["Why?", " "]'), ["Why?", ""]),  # " " is not empty before it is stripped
    ("lines", query_only("Why do leaves fall?\n\n  Will the tree be okay?  "), REASK),
    ("numbered lines", query_only("1. Why?\n2. How?"), REASK),
    ("a JSON object", query_only('{"q": 1}'), REASK),
    ("null", query_only("null"), REASK),  # a required list: missing
    ("a fenced block", query_only('```\n["Why?"]\n```'), REASK),
    ("no questions section", "[[ ## reasoning ## ]]\nNothing to ask.\n[[ ## confidence ## ]]\n1", REASK),
    ("a confidence in words", query_only('["Why?"]', confidence="high"), REASK),
]


def _read(read, raw):
    try:
        return read(raw)
    except AnswerUnusable:
        return REASK


@pytest.mark.parametrize(("case", "raw", "questions"), EXTRACTIONS, ids=[case for case, _, _ in EXTRACTIONS])
def test_an_extraction_is_read_as_worked_by_hand(case, raw, questions):
    reading = _read(extracted_read, raw)
    assert (reading if reading is REASK else reading.questions) == questions


@pytest.mark.parametrize(("case", "raw", "questions"), QUERY_ONLY, ids=[case for case, _, _ in QUERY_ONLY])
def test_a_query_only_answer_is_read_as_worked_by_hand(case, raw, questions):
    reading = _read(query_only_read, raw)
    assert (reading if reading is REASK else reading.questions) == questions


def test_the_reasoning_and_the_confidence_are_read_as_the_adapter_reads_them():
    raw = extraction('["Why?"]', confidence="-.5 or so", reasoning="  First line.\n\n   Second line.  ")
    assert extracted_read(raw) == Questions(["Why?"], "First line.\nSecond line.", -0.5)


def reference_kept(parsed: dict) -> list[str] | None:
    """The starter kit's converter of an extraction (PrefNuggetJudge._make_convert_output, tag
    rag4reports-submission), restated: a value that is not a list is refused; the first 2 strings, stripped,
    that are not empty."""
    questions = parsed["differentiating_questions"]
    if not isinstance(questions, list):
        return REASK
    return [q.strip() for q in questions if q and isinstance(q, str) and q.strip()][:2]


def reference_parse(signature, raw: str) -> dict | None:
    try:
        return tolerant_chat_adapter().parse(signature, raw)
    except AdapterParseError:
        return REASK


@needs_adapter
def test_every_answer_is_read_as_the_reference_adapter_parses_it():
    """Every answer of both tables, under both prompts' fields: the same fields and values as the installed
    TolerantChatAdapter gives, or unusable (asked again) exactly where it raises."""
    compared = 0
    for _case, raw, _questions in EXTRACTIONS + QUERY_ONLY:
        for signature, fields in (
            (minima_reference.EXTRACT, EXTRACT_FIELDS),
            (minima_reference.QUERY_ONLY, QUERY_ONLY_FIELDS),
        ):
            assert _read(partial(answer_fields, fields=fields), raw) == reference_parse(signature, raw), raw
            compared += 1
    assert compared == 2 * (len(EXTRACTIONS) + len(QUERY_ONLY))


@needs_adapter
def test_the_hand_tables_agree_with_the_reference():
    """The questions worked by hand are the reference's: the adapter's parse, then the converter."""
    for _case, raw, questions in EXTRACTIONS:
        parsed = reference_parse(minima_reference.EXTRACT, raw)
        assert (REASK if parsed is REASK else reference_kept(parsed)) == questions, raw
    for _case, raw, questions in QUERY_ONLY:
        parsed = reference_parse(minima_reference.QUERY_ONLY, raw)
        assert (REASK if parsed is REASK else parsed["questions"]) == questions, raw
    assert len(EXTRACTIONS) > 25 and len(QUERY_ONLY) > 10


@pytest.mark.skipif(not SHARED_PROMPTS.is_dir(), reason="the published prompts are in ../shared, not in this clone")
@pytest.mark.parametrize("stem", ["pn2_extract_iterative", "rubric_queryonly_generate"])
def test_the_system_messages_are_the_published_ones_byte_for_byte(stem):
    name = f"{stem}.system.txt"
    assert (FOLDER / name).read_bytes() == (SHARED_PROMPTS / name).read_bytes()
