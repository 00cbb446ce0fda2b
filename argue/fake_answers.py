"""How the fake LLM server answers ARGUE-style prompts (`registry.FakeAnswer`; never a real job), in DSPy's
layout: a cited document supports a sentence when the sentence is in it, a sentence agrees with a gold answer
when the answer is in it (both case-insensitive). Flipped: yes and no change places."""

import re

from assessor.jobs.llm.fake_rules import dspy_answer, sections
from assessor.registry import FakeAnswer

YES_NO_FLIPS = {"yes": "no", "no": "yes"}


def citation_support(user: str) -> str:
    fields = sections(user)
    yes = fields.get("sentence", "").lower() in fields.get("document", "").lower()
    return dspy_answer("The document was read for the sentence.", supports="yes" if yes else "no")


def answer_agreement(user: str) -> str:
    fields = sections(user)
    yes = fields.get("gold_answer", "").lower() in fields.get("sentence", "").lower()
    return dspy_answer("The sentence was read for the gold answer.", agrees="yes" if yes else "no")


def yes_no_flip(answer: str) -> str:
    return re.sub(r"(## \]\]\n)(yes|no)\b", lambda m: m.group(1) + YES_NO_FLIPS[m.group(2)], answer)


FAKE_ANSWERS = (
    FakeAnswer("You are ArgueCitationJudge", citation_support, flip=yes_no_flip),
    FakeAnswer("You are ArgueAnswerJudge", answer_agreement, flip=yes_no_flip),
)
