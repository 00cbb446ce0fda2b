"""How the fake LLM server answers ARGUE-style prompts (`registry.FakeAnswer`; never a real job).

In DSPy's layout: a cited document supports a sentence when the sentence is in it, a sentence agrees with a
gold answer when the answer is in it (both case-insensitive). One word, YES or NO, for an uncited sentence:
it needs a citation when a word after its first starts with a capital letter or holds a digit; it is a
first instance unless every one of its words (case-insensitive) is in the earlier sentences; it is a
negative assertion when one of its words is "no", "not", "never" or ends in "n't". Flipped: yes and no
change places."""

import re

from assessor.jobs.llm.fake_rules import WORD, dspy_answer, sections
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


def _bare(yes: bool) -> str:
    return "YES" if yes else "NO"


def needs_citation(user: str) -> str:
    words = WORD.findall(sections(user).get("sentence", ""))
    return _bare(any(word[0].isupper() or any(c.isdigit() for c in word) for word in words[1:]))


def first_instance(user: str) -> str:
    fields = sections(user)
    earlier = {word.lower() for word in WORD.findall(fields.get("earlier_sentences", ""))}
    return _bare(not all(word.lower() in earlier for word in WORD.findall(fields.get("sentence", ""))))


def negative_assertion(user: str) -> str:
    words = [word.lower() for word in WORD.findall(sections(user).get("sentence", ""))]
    return _bare(any(word in ("no", "not", "never") or word.endswith("n't") for word in words))


def bare_flip(answer: str) -> str:
    return {"YES": "NO", "NO": "YES"}.get(answer, answer)


FAKE_ANSWERS = (
    FakeAnswer("You are ArgueCitationJudge", citation_support, flip=yes_no_flip),
    FakeAnswer("You are ArgueAnswerJudge", answer_agreement, flip=yes_no_flip),
    FakeAnswer("You are ArgueNeedsCitationJudge", needs_citation, flip=bare_flip),
    FakeAnswer("You are ArgueFirstInstanceJudge", first_instance, flip=bare_flip),
    FakeAnswer("You are ArgueNegativeJudge", negative_assertion, flip=bare_flip),
)
