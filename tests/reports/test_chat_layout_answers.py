"""The report family's judged answers (preferences, grades, the ARGUE-style yes/no in sections) read as the
reference reads them: minima-llm 0.2.8's TolerantChatAdapter under the starter kit's signatures, then its
converters. Checked by hand and against the installed adapter itself on the same answers."""

import re

import pytest

from argue.llm import yes_no_read
from assessor.jobs.llm.parsing import AnswerUnusable
from grades.llm import Reading as GradeReading
from grades.llm import grade_answer_read
from preferences.llm import Reading as PreferenceReading
from preferences.llm import preference_read
from tests import minima_reference
from tests.minima_reference import PACKAGE, AdapterParseError, adapter_file, tolerant_chat_adapter

REASK = None  # the adapter refuses the answer (or the converter after it): it is asked again

needs_adapter = pytest.mark.skipif(
    adapter_file() is None, reason=f"the reference adapter's package {PACKAGE} is not installed"
)


def preference(value: str, *, confidence: str = "0.9", reasoning: str = "Both are fine.") -> str:
    return (
        f"[[ ## reasoning ## ]]\n{reasoning}\n\n[[ ## better_passage ## ]]\n{value}\n\n"
        f"[[ ## confidence ## ]]\n{confidence}\n\n[[ ## completed ## ]]"
    )


def grade(value: str, *, confidence: str = "0.9", reasoning: str = "It names the pigment.") -> str:
    return (
        f"[[ ## reasoning ## ]]\n{reasoning}\n\n[[ ## grade ## ]]\n{value}\n\n"
        f"[[ ## confidence ## ]]\n{confidence}\n\n[[ ## completed ## ]]"
    )


def support(value: str, *, reasoning: str = "The document says so.") -> str:
    return f"[[ ## reasoning ## ]]\n{reasoning}\n\n[[ ## supports ## ]]\n{value}\n\n[[ ## completed ## ]]"


FINE = "Both are fine."
# (case, answer, worked by hand: (label with ties allowed, label must-decide, confidence, reasoning), or REASK)
PREFERENCES = [
    ("as asked", preference("1"), (1, 1, 0.9, FINE)),
    (
        "headers in another case and spacing",
        preference("2")
        .replace("[[ ## better_passage ## ]]", "[[## Better Passage ##]]")
        .replace("[[ ## confidence ## ]]", "[[  ##CONFIDENCE##  ]]"),
        (2, 2, 0.9, FINE),
    ),
    (
        "headers inside lines",
        "I compared them. [[ ## reasoning ## ]] The second is longer. [[ ## better_passage ## ]] 2\n"
        "[[ ## confidence ## ]] 0.7 [[ ## completed ## ]]",
        (2, 2, 0.7, "The second is longer."),
    ),
    ("a field given twice: the last wins", preference("1") + "\n[[ ## better_passage ## ]]\n2", (2, 2, 0.9, FINE)),
    (
        "a field given twice, the second saying none",
        preference("1") + "\n[[ ## Better_Passage ## ]]\nNone",
        (1, 1, 0.9, FINE),
    ),
    ("a confidence with words after it", preference("1", confidence="0.75 (fairly sure)"), (1, 1, 0.75, FINE)),
    ("a confidence of -.5", preference("2", confidence="-.5"), (2, 2, -0.5, FINE)),
    ("a confidence in a sentence", preference("2", confidence="I am 80% sure"), (2, 2, 80.0, FINE)),
    (
        "a reasoning over lines",
        preference("0", reasoning="  First line.\n\n   Second line.  "),
        (0, 0, 0.9, "First line.\nSecond line."),
    ),
    ("a label with words", preference("Passage 2, clearly"), (2, 2, 0.9, FINE)),
    ("a tie", preference("0"), (0, 0, 0.9, FINE)),  # must-decide: no 1 or 2 named, the reference's 0
    ("no allowed digit", preference("neither"), (None, 0, 0.9, FINE)),  # with ties: the reference's -1
    ("a label over lines", preference("Hard to say.\n\n2"), (2, 2, 0.9, FINE)),
    ("a label saying null", preference("null"), REASK),
    ("a label saying None", preference("None"), REASK),
    ("an empty label", preference(""), REASK),
    ("a confidence in words", preference("1", confidence="high"), REASK),
    ("a confidence saying null", preference("1", confidence="NULL"), REASK),
    ("no confidence", preference("1").replace("[[ ## confidence ## ]]\n0.9", ""), REASK),
    ("no reasoning", preference("1").replace("[[ ## reasoning ## ]]\n", ""), REASK),
    ("a reasoning saying none", preference("1", reasoning="none"), REASK),
    ("no sections", "1", REASK),
    ("a hyphen in a header", preference("1").replace("better_passage", "better-passage"), REASK),
    (
        "a header without its hashes",
        preference("1").replace("[[ ## better_passage ## ]]", "[[ better_passage ]]"),
        REASK,
    ),
]

REASONED = "It names the pigment."
# (case, answer, worked by hand: (grade, confidence, reasoning), or REASK)
GRADES = [
    ("as asked", grade("4"), (4, 0.9, REASONED)),
    (
        "headers in another case and spacing",
        grade("3")
        .replace("[[ ## grade ## ]]", "[[ ##GRADE## ]]")
        .replace("[[ ## reasoning ## ]]", "[[##Reasoning ##]]"),
        (3, 0.9, REASONED),
    ),
    (
        "headers inside lines",
        "[[ ## reasoning ## ]] Partly. [[ ## grade ## ]] 2 [[ ## confidence ## ]] 0.4",
        (2, 0.4, "Partly."),
    ),
    ("a grade out of five", grade("4/5"), (4, 0.9, REASONED)),
    ("a grade with words", grade("Grade: 3"), (3, 0.9, REASONED)),
    ("no digit 0-5 standing alone", grade("7 out of 10"), (0, 0.9, REASONED)),
    ("the first digit standing alone", grade("45 then 5"), (5, 0.9, REASONED)),
    ("a field given twice: the last wins", grade("2") + "\n[[ ## grade ## ]]\n5", (5, 0.9, REASONED)),
    ("a field given twice, the second null", grade("2") + "\n[[ ## grade ## ]]\nnull", (2, 0.9, REASONED)),
    ("a confidence with words after it", grade("1", confidence="0.8, since it names it"), (1, 0.8, REASONED)),
    ("a confidence given twice", grade("1", confidence="0.2") + "\n[[ ## confidence ## ]]\n1", (1, 1.0, REASONED)),
    ("a grade saying null", grade("null"), REASK),
    ("a grade saying NONE", grade("NONE"), REASK),
    ("an empty grade", "[[ ## grade ## ]]\n\n[[ ## completed ## ]]", REASK),
    ("a confidence in words", grade("4", confidence="high"), REASK),
    ("no confidence", grade("4").replace("[[ ## confidence ## ]]\n0.9", ""), REASK),
    ("no reasoning", "[[ ## grade ## ]]\n4\n\n[[ ## confidence ## ]]\n0.9", REASK),
    ("no sections", "I would say it is good.", REASK),
]

SAID = "The document says so."
# (case, answer, worked by hand: (yes, reasoning), or REASK)
SUPPORTS = [
    ("as asked", support("yes"), (True, SAID)),
    ("another case and spacing", support("No.").replace("[[ ## supports ## ]]", "[[## SUPPORTS ##]]"), (False, SAID)),
    ("a field given twice: the last wins", support("no") + "\n[[ ## supports ## ]]\nYes", (True, SAID)),
    ("on the header's line", "[[ ## reasoning ## ]] Read. [[ ## supports ## ]] yes, fully", (True, "Read.")),
    ("neither", support("perhaps"), (False, SAID)),
    ("saying null", support("null"), REASK),
    ("no reasoning", "[[ ## supports ## ]]\nyes", REASK),
    ("no sections", "It supports it.", REASK),
]


def _read(read, raw):
    try:
        return read(raw)
    except AnswerUnusable:
        return REASK


def _ids(table):
    return [case for case, _, _ in table]


@pytest.mark.parametrize(("case", "raw", "expected"), PREFERENCES, ids=_ids(PREFERENCES))
def test_a_preference_is_read_as_worked_by_hand(case, raw, expected):
    ties = _read(lambda text: preference_read(text, must_decide=False), raw)
    must_decide = _read(lambda text: preference_read(text, must_decide=True), raw)
    if expected is REASK:
        assert (ties, must_decide) == (REASK, REASK)
        return
    label, decided, confidence, reasoning = expected
    assert ties == PreferenceReading(label, confidence, reasoning)
    assert must_decide == PreferenceReading(decided, confidence, reasoning)


@pytest.mark.parametrize(("case", "raw", "expected"), GRADES, ids=_ids(GRADES))
def test_a_grade_is_read_as_worked_by_hand(case, raw, expected):
    assert _read(grade_answer_read, raw) == (expected if expected is REASK else GradeReading(*expected))


@pytest.mark.parametrize(("case", "raw", "expected"), SUPPORTS, ids=_ids(SUPPORTS))
def test_a_yes_no_in_sections_is_read_as_worked_by_hand(case, raw, expected):
    said = _read(lambda text: yes_no_read(text, field="supports"), raw)
    assert (said if said is REASK else (said.yes, said.reasoning)) == expected


def test_an_unusable_answer_says_what_to_mend():
    with pytest.raises(AnswerUnusable, match=r"\[\[ ## confidence ## \]\] section: 'high' is not a number"):
        preference_read(preference("1", confidence="high"), must_decide=False)
    with pytest.raises(AnswerUnusable, match=r"no value in \[\[ ## reasoning ## \]\], \[\[ ## grade ## \]\]"):
        grade_answer_read("I would say it is good.")


# The starter kit's converters (tag rag4reports-submission), restated: the first allowed digit standing alone;
# none: -1 with ties allowed (the app's None), 0 when the prompt must decide, 0 for a grade.
def _first_digit(pattern: str, text: str, default: int) -> int:
    found = re.search(pattern, text)
    return int(found.group(1)) if found else default


def reference_parse(signature, raw: str) -> dict | None:
    try:
        return tolerant_chat_adapter().parse(signature, raw)
    except AdapterParseError:
        return REASK


def reference_preference(raw: str, *, must_decide: bool) -> PreferenceReading | None:
    signature = minima_reference.PREFERENCE_MUST_DECIDE if must_decide else minima_reference.PREFERENCE_TIES
    parsed = reference_parse(signature, raw)
    if parsed is REASK:
        return REASK
    if must_decide:
        label: int | None = _first_digit(r"\b([1-2])\b", parsed["better_passage"], 0)
    else:
        label = _first_digit(r"\b([0-2])\b", parsed["better_passage"], -1)
    return PreferenceReading(None if label == -1 else label, parsed["confidence"], parsed["reasoning"])


def reference_grade(raw: str) -> GradeReading | None:
    parsed = reference_parse(minima_reference.GRADE, raw)
    if parsed is REASK:
        return REASK
    return GradeReading(_first_digit(r"\b([0-5])\b", parsed["grade"], 0), parsed["confidence"], parsed["reasoning"])


def reference_support(raw: str) -> tuple[str, str] | None:
    parsed = reference_parse(minima_reference.CITATION_SUPPORT, raw)
    return REASK if parsed is REASK else (parsed["supports"], parsed["reasoning"])


ALL_ANSWERS = [raw for table in (PREFERENCES, GRADES, SUPPORTS) for _, raw, _ in table]


@needs_adapter
def test_every_answer_is_read_as_the_reference_adapter_parses_it():
    """Every answer of the three tables under each prompt's signature: the app's reading is the installed
    adapter's parse and the reference's converter, unusable (asked again) exactly where the adapter raises."""
    compared = 0
    for raw in ALL_ANSWERS:
        for must_decide in (False, True):
            mine = _read(lambda text, decide=must_decide: preference_read(text, must_decide=decide), raw)
            assert mine == reference_preference(raw, must_decide=must_decide), raw
        assert _read(grade_answer_read, raw) == reference_grade(raw), raw
        said = _read(lambda text: yes_no_read(text, field="supports"), raw)
        if said is REASK:
            assert reference_support(raw) is REASK, raw
        else:
            supports, reasoning = reference_support(raw)
            first_word = re.search(r"[A-Za-z]+", supports)  # argue's own rule on the adapter's text
            assert (said.yes, said.reasoning) == (
                first_word is not None and first_word.group().lower() == "yes",
                reasoning,
            ), raw
        compared += 1
    assert compared == len(PREFERENCES) + len(GRADES) + len(SUPPORTS) > 45


@needs_adapter
def test_the_hand_tables_agree_with_the_reference():
    """What the tables worked by hand say is what the adapter and the starter kit's converters give."""
    for _case, raw, expected in PREFERENCES:
        ties, decided = reference_preference(raw, must_decide=False), reference_preference(raw, must_decide=True)
        if expected is REASK:
            assert (ties, decided) == (REASK, REASK), raw
        else:
            assert (ties.label, decided.label, ties.confidence, ties.reasoning) == expected, raw
    for _case, raw, expected in GRADES:
        assert reference_grade(raw) == (expected if expected is REASK else GradeReading(*expected)), raw
    refused = [raw for _case, raw, expected in PREFERENCES + GRADES if expected is REASK]
    assert len(refused) > 15 and all(raw in ALL_ANSWERS for raw in refused)
