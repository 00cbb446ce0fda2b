"""How the fake LLM server answers the support prompts (`registry.FakeAnswer`; never a real job): "FS" if the
sentence is in the passage, "PS" if one of its words of 4+ letters is, else "NS"; the published prompt (Thakur
et al., no system message) says "Full Support", "Partial Support" or "No Support" of the statement against the
citation. Flipped: full and no support change places."""

from assessor.jobs.llm.fake_rules import line_after, long_words
from assessor.registry import FakeAnswer, FakeMatch

SUPPORT_FLIPS = {"FS": "NS", "NS": "FS", "Full Support": "No Support", "No Support": "Full Support"}
PUBLISHED_WORDS = {"FS": "Full Support", "PS": "Partial Support", "NS": "No Support"}


def support_code(sentence: str, passage: str) -> str:
    if sentence.lower() in passage.lower():
        return "FS"
    return "PS" if long_words(sentence) & long_words(passage) else "NS"


def support(user: str) -> str:
    return support_code(line_after(user, "Sentence: "), line_after(user, "Passage: "))


def support_published(user: str) -> str:
    return PUBLISHED_WORDS[support_code(line_after(user, "Statement: "), line_after(user, "Citation: "))]


def support_flip(answer: str) -> str:
    return SUPPORT_FLIPS.get(answer, answer)


FAKE_ANSWERS = (
    FakeAnswer("You are SupportJudgeLLM", support, flip=support_flip),
    FakeAnswer(
        "In this task, you will evaluate whether each statement",
        support_published,
        match=FakeMatch.USER_START,
        flip=support_flip,
    ),
)
