"""How the fake LLM server answers PrefNugget's bank prompts (`registry.FakeAnswer`; never a real job), in DSPy's
layout. The two prompts end their objective alike and are told apart by their input fields:

- the contrastive extraction: for each sentence of the winner that the loser does not contain, the question
  "<its first 5 words>?", leaving out those already given; all of them (the job keeps the first 2);
- the query-only bank: "What about <word>?" for each distinct word of 4+ letters of the title, in order.
"""

import json

from assessor.jobs.llm.fake_rules import SENTENCE_END, WORD, dspy_answer, first_words, sections
from assessor.registry import FakeAnswer, FakeMatch


def contrastive_questions(user: str) -> str:
    fields = sections(user)
    given = set(json.loads(fields.get("given_exam_questions") or "[]"))
    loser = fields.get("loser_passage", "")
    questions: list[str] = []
    for sentence in SENTENCE_END.split(fields.get("winner_passage", "")):
        question = f"{first_words(sentence, 5)}?"
        if sentence.strip() and sentence.strip() not in loser and question not in given and question not in questions:
            questions.append(question)
    reasoning = f"The winner says {len(questions)} things the loser does not."
    return dspy_answer(reasoning, differentiating_questions=json.dumps(questions), confidence="0.7")


def query_only_questions(user: str) -> str:
    words: list[str] = []
    for word in WORD.findall(sections(user).get("query_title", "")):
        if len(word) >= 4 and word.lower() not in words:
            words.append(word.lower())
    questions = [f"What about {word}?" for word in words]
    return dspy_answer("The title's words.", questions=json.dumps(questions), confidence="0.9")


def bank_questions(user: str) -> str:
    return contrastive_questions(user) if "[[ ## winner_passage ## ]]" in user else query_only_questions(user)


FAKE_ANSWERS = (
    FakeAnswer(
        'Make questions self-contained (e.g., "Capital of France?" not "The capital?").',
        bank_questions,
        match=FakeMatch.SYSTEM_END,
    ),
)
