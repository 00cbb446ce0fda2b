"""How the fake LLM server answers AutoNuggets' prompts (`registry.FakeAnswer`; never a real job).

- nuggetize: the current list, then the first 6 words of each context passage not yet in it, capped at 30;
- importance: "vital" for a nugget with an even number of words, else "okay" (flipped: the other).
"""

import json
import re

from assessor.jobs.llm.fake_rules import first_words, list_after
from assessor.registry import FakeAnswer

IMPORTANCE_FLIPS = {"vital": "okay", "okay": "vital"}


def nuggetize(user: str) -> str:
    context = user.split("Context:\n", 1)[1].split("\nSearch Query:", 1)[0]
    passages = [re.sub(r"^\[\d+\] ", "", line) for line in context.splitlines() if re.match(r"^\[\d+\] ", line)]
    nuggets = list_after(user, "Initial Nugget List: ")
    for passage in passages:
        nugget = first_words(passage)
        if nugget and nugget not in nuggets:
            nuggets.append(nugget)
    return json.dumps(nuggets[:30])


def importance(user: str) -> str:
    nuggets = list_after(user, "Nugget List: ")
    return json.dumps(["vital" if len(n.split()) % 2 == 0 else "okay" for n in nuggets])


def importance_flip(answer: str) -> str:
    return json.dumps([IMPORTANCE_FLIPS.get(label, label) for label in json.loads(answer)])


FAKE_ANSWERS = (
    FakeAnswer("You are NuggetizeLLM", nuggetize),
    FakeAnswer("You are NuggetizeScoreLLM", importance, flip=importance_flip),
)
