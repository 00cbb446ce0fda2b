"""How the fake LLM server answers PrefNugget's grading prompt (`registry.FakeAnswer`; never a real job), in
DSPy's layout: the question's words of four letters or more found in the passage, at most 5. Flipped: grade g
becomes 5 - g."""

import re

from assessor.jobs.llm.fake_rules import dspy_answer, long_words, sections
from assessor.registry import FakeAnswer, FakeMatch


def question_grade(user: str) -> str:
    fields = sections(user)
    shared = len(long_words(fields.get("question", "")) & long_words(fields.get("passage", "")))
    return dspy_answer(
        f"The passage has {shared} of the question's words.", grade=str(min(5, shared)), confidence="0.9"
    )


def question_grade_flip(answer: str) -> str:
    return re.sub(r"(\[\[ ## grade ## \]\]\n)([0-5])", lambda m: m.group(1) + str(5 - int(m.group(2))), answer)


FAKE_ANSWERS = (
    FakeAnswer(
        "- 0: The answer is not relevant or complete at all.",
        question_grade,
        match=FakeMatch.SYSTEM_END,
        flip=question_grade_flip,
    ),
)
