"""How the fake LLM server answers PrefNugget's preference prompts (`registry.FakeAnswer`; never a real job), in
DSPy's layout: the passage with more distinct words of 4+ letters of the title and problem statement is better;
equal counts are a tie ("0"), or "1" for the must-decide prompt. Flipped: 1 and 2 change places."""

import re

from assessor.jobs.llm.fake_rules import dspy_answer, long_words, sections
from assessor.registry import FakeAnswer, FakeMatch


def preference(user: str, *, must_decide: bool) -> str:
    fields = sections(user)
    asked = long_words(fields.get("query_title", "") + " " + fields.get("query_problem", ""))
    first, second = (len(asked & long_words(fields.get(f"passage_{n}", ""))) for n in (1, 2))
    better = "1" if first > second else "2" if second > first else ("1" if must_decide else "0")
    reasoning = f"Passage 1 shares {first} of the request's words, passage 2 {second}."
    return dspy_answer(reasoning, better_passage=better, confidence="0.8")


def preference_flip(answer: str) -> str:
    swap = {"1": "2", "2": "1"}
    return re.sub(r"(\[\[ ## better_passage ## \]\]\n)([12])", lambda m: m.group(1) + swap[m.group(2)], answer)


FAKE_ANSWERS = (
    FakeAnswer(
        "If both passages are similar, answer with 0.",
        lambda user: preference(user, must_decide=False),
        match=FakeMatch.SYSTEM_END,
        flip=preference_flip,
    ),
    FakeAnswer(
        "If both passages are similar, select the simplest and clearest.",
        lambda user: preference(user, must_decide=True),
        match=FakeMatch.SYSTEM_END,
        flip=preference_flip,
    ),
)
