"""How the fake LLM server answers UMBRELA's prompts (`registry.FakeAnswer`; never a real job): the number of
distinct query words of 4+ letters in the passage, at most 3; the published prompt (no system message) says it
as "##final score: N". Flipped: grade g becomes 3 - g."""

import re

from assessor.jobs.llm.fake_rules import line_after, long_words
from assessor.registry import FakeAnswer, FakeMatch


def grade(query: str, passage: str) -> int:
    return min(3, len(long_words(query) & long_words(passage)))


def umbrela(user: str) -> str:
    return str(grade(line_after(user, "Search Query: "), line_after(user, "Passage: ")))


def umbrela_published(user: str) -> str:
    return f"##final score: {grade(line_after(user, 'Query: '), line_after(user, 'Passage: '))}"


def grade_flip(answer: str) -> str:
    return re.sub(r"\d", lambda digit: str(3 - int(digit.group())), answer)


FAKE_ANSWERS = (
    FakeAnswer("You are RelevanceJudgeLLM", umbrela, flip=grade_flip),
    FakeAnswer(
        "Given a query and a passage, you must provide a score",
        umbrela_published,
        match=FakeMatch.USER_START,
        flip=grade_flip,
    ),
)
