"""How the fake LLM server answers AutoAssign's prompt (`registry.FakeAnswer`; never a real job): "support" if
the nugget's text is in the passage (case-insensitive), "partial_support" if one of its words of 4+ letters is,
else "not_support" (flipped: support and not_support change places)."""

import json

from assessor.jobs.llm.fake_rules import line_after, list_after, long_words
from assessor.registry import FakeAnswer

LABEL_FLIPS = {"support": "not_support", "not_support": "support"}


def assign(user: str) -> str:
    passage = line_after(user, "Passage: ").lower()
    labels = []
    for nugget in list_after(user, "Nugget List: "):
        if nugget.lower() in passage:
            labels.append("support")
        elif long_words(nugget) & long_words(passage):
            labels.append("partial_support")
        else:
            labels.append("not_support")
    return json.dumps(labels)


def assign_flip(answer: str) -> str:
    return json.dumps([LABEL_FLIPS.get(label, label) for label in json.loads(answer)])


FAKE_ANSWERS = (FakeAnswer("You are NuggetizeAssignerLLM", assign, flip=assign_flip),)
