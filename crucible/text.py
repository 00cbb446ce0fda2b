"""Crucible's pure rules over plain data: chunks, an extraction's confidence, stems, and the report.

- Chunks: a document's sentences (split after `.`, `!` or `?` and whitespace) gathered in order while
  the chunk stays within about 1,000 characters; a sentence longer than that is a chunk of its own.
- Confidence: the mean token probability, exp(logprob), over the tokens of the answer's extracted text
  (the tokens that overlap its `[[ ## extracted_text ## ]]` section). A mean, not a product, so that a
  long passage is not ranked below a short one for its length alone; rounded to six decimals, so that
  equal probabilities tie whatever the number of tokens and the retrieval order decides.
- Repeats: two sentences are one when their stopped and stemmed words are the same (bm25s's English
  stop words, PyStemmer's Snowball English stemmer).
- The report: per question its top k candidates by confidence (ties: retrieval order), repeats of a
  sentence already kept dropped; the kept sentences in rounds (every question's best in the bank's
  order, then every question's second...), so that a cut keeps each question's best first; then cut to
  the request's limit at a sentence boundary (`reports.layout.report_cut`).
"""

import math
import re
from collections.abc import Sequence
from dataclasses import dataclass
from functools import cache

from assessor.jobs.llm.client import TokenLogprob

CHUNK_CHARS = 1_000
CONFIDENCE_DECIMALS = 6
SENTENCE_END = re.compile(r"(?<=[.!?])\s+")
WORD = re.compile(r"\w+")
# What a model writes for "this document does not answer the question" (compared without case or punctuation).
NO_ANSWERS = frozenset({"", "no answer", "none", "n a", "not applicable", "no relevant text", "not found"})


def sentences_split(text: str) -> list[str]:
    return [sentence for sentence in (part.strip() for part in SENTENCE_END.split(text)) if sentence]


def chunks_split(text: str, size: int = CHUNK_CHARS) -> list[str]:
    """A document's chunks of about `size` characters, each whole sentences joined by one space."""
    chunks: list[str] = []
    current = ""
    for sentence in sentences_split(text):
        if current and len(current) + 1 + len(sentence) > size:
            chunks.append(current)
            current = sentence
        else:
            current = f"{current} {sentence}" if current else sentence
    if current:
        chunks.append(current)
    return chunks


def is_no_answer(text: str) -> bool:
    return " ".join(WORD.findall(text.lower())).replace("_", " ") in NO_ANSWERS


def confidence_of(logprobs: Sequence[TokenLogprob], text: str, start: int, end: int) -> float | None:
    """The mean probability of the tokens of `text` (the answer) that overlap [start, end); None when none do.

    The tokens are laid end to end; where their text does not add up to the answer's (an endpoint that
    normalises whitespace), they are laid from the answer's first character all the same.
    """
    probabilities = []
    offset = 0
    for entry in logprobs:
        token_end = offset + len(entry.token)
        if offset < end and token_end > start and entry.token.strip():
            probabilities.append(math.exp(entry.logprob))
        offset = token_end
    if not probabilities:
        return None
    return round(sum(probabilities) / len(probabilities), CONFIDENCE_DECIMALS)


@cache
def _stemmer():
    import Stemmer

    return Stemmer.Stemmer("english")


@cache
def _stop_words() -> frozenset[str]:
    from bm25s.stopwords import STOPWORDS_EN

    return frozenset(STOPWORDS_EN)


def stem_key(sentence: str) -> tuple[str, ...]:
    """A sentence's stopped and stemmed words: two sentences with the same key are one."""
    stop = _stop_words()
    words = [word for word in WORD.findall(sentence.lower()) if word not in stop]
    return tuple(_stemmer().stemWords(words))


@dataclass(frozen=True)
class Candidate:
    """One extraction: what answers question `question` (its position in the bank) from one chunk."""

    question: int
    rank: int  # the chunk's retrieval order in its topic (ties of confidence are broken by it)
    docid: str
    text: str  # the sentence the report would use (condensed or extracted, by the variant)
    confidence: float


def report_sentences(candidates: Sequence[Candidate], *, k: int) -> list[Candidate]:
    """The report's sentences before the cut: per question the top k, repeats dropped, in rounds."""
    by_question: dict[int, list[Candidate]] = {}
    for candidate in sorted(candidates, key=lambda c: (c.question, -c.confidence, c.rank)):
        by_question.setdefault(candidate.question, []).append(candidate)
    tops = [by_question[question][:k] for question in sorted(by_question)]
    kept: list[Candidate] = []
    seen: set[tuple[str, ...]] = set()
    for round_ in range(k):
        for top in tops:
            if round_ < len(top):
                key = stem_key(top[round_].text)
                if key not in seen:
                    seen.add(key)
                    kept.append(top[round_])
    return kept
