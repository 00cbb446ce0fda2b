"""How the fake LLM server answers Crucible's extraction prompt (`registry.FakeAnswer`; never a real job).

The extracted text is the document's sentences (split after . ! or ? and a space) that share a word of 4+
letters with the question, joined by one space ("NO ANSWER" when none does); the condensed sentence is the
first of them. Asked for log-probabilities, every token of the extracted text has the probability
(s + 1) / (q + 2), s the question's distinct words of 4+ letters in the extracted text and q all of them.
"""

import math
import re

from assessor.jobs.llm.fake_rules import SENTENCE_END, long_words, sections
from assessor.registry import FakeAnswer, FakeMatch

NO_ANSWER = "NO ANSWER"
EXTRACTED = re.compile(r"\[\[ ## extracted_text ## \]\]\n(.*?)(?=\n\n\[\[ ## |\Z)", re.DOTALL)


def extraction(user: str) -> str:
    fields = sections(user)
    asked = long_words(fields.get("nugget_text", ""))
    found = [s for s in SENTENCE_END.split(fields.get("source_document", "")) if asked & long_words(s)]
    extracted, condensed = (" ".join(found), found[0]) if found else (NO_ANSWER, NO_ANSWER)
    return f"[[ ## extracted_text ## ]]\n{extracted}\n\n[[ ## condensed_sentence ## ]]\n{condensed}\n\n[[ ## completed ## ]]"


def extracted_logprob(user: str, answer: str) -> tuple[tuple[int, int], float]:
    found = EXTRACTED.search(answer)
    if found is None:
        return (0, 0), 0.0
    asked = long_words(sections(user).get("nugget_text", ""))
    probability = (len(asked & long_words(found.group(1))) + 1) / (len(asked) + 2)
    return found.span(1), math.log(probability)


FAKE_ANSWERS = (
    FakeAnswer(
        "how the question is answered, without referring to the source document.",
        extraction,
        match=FakeMatch.SYSTEM_END,
        logprob_span=extracted_logprob,
    ),
)
