"""Reading the bank prompts' answers as the reference reads them: minima-llm 0.2.8's `TolerantChatAdapter`
(the adapter the PrefNugget starter kit runs DSPy with), then the starter kit's converters.

The adapter's rules (headers in any case and spacing, a field saying none or null missing, a float as its
first number, a list as a JSON array or a Python list literal, asked again where the adapter would ask) are
the report family's one reading of the chat layout: `reports.chat_layout.answer_fields`, given the
reference's output fields of each prompt here.

Then the converters:
- Contrastive extraction (`differentiating_questions`, optional in the reference's signature): a missing
  list is refused ("LLM did not follow instructions"), so asked again; the questions kept are its first 2
  that are not empty once stripped.
- The query-only bank (`questions`, required): the list as read. The bank takes its first 20 distinct
  non-empty questions (`contrastive.bank_of`).
"""

from dataclasses import dataclass

from assessor.jobs.llm.parsing import AnswerUnusable
from prefnugget.contrastive import QUESTIONS_PER_PAIR, kept_questions
from reports.chat_layout import REASONING, FieldValue, OutputField, answer_fields

EXTRACT_FIELD = "differentiating_questions"
QUERY_ONLY_FIELD = "questions"

# The reference's output fields (DSPy's ChainOfThought puts `reasoning` first), with their types.
EXTRACT_FIELDS = (
    REASONING,
    OutputField(EXTRACT_FIELD, "list", optional=True),
    OutputField("confidence", "float"),
)
QUERY_ONLY_FIELDS = (
    REASONING,
    OutputField(QUERY_ONLY_FIELD, "list"),
    OutputField("confidence", "float"),
)


@dataclass(frozen=True)
class Questions:
    questions: list[str]
    reasoning: str
    confidence: float


def _questions(values: dict[str, FieldValue], name: str, *, keep: int | None = None) -> Questions:
    listed = values[name]
    if not isinstance(listed, list):
        raise AnswerUnusable(f"the [[ ## {name} ## ]] section says none; give a JSON array of questions")
    questions = kept_questions(listed, keep=keep) if keep is not None else listed
    reasoning, confidence = values["reasoning"], values["confidence"]
    assert isinstance(reasoning, str) and isinstance(confidence, float)
    return Questions(questions, reasoning, confidence)


def extracted_read(raw: str, *, keep: int = QUESTIONS_PER_PAIR) -> Questions:
    return _questions(answer_fields(raw, EXTRACT_FIELDS), EXTRACT_FIELD, keep=keep)


def query_only_read(raw: str) -> Questions:
    return _questions(answer_fields(raw, QUERY_ONLY_FIELDS), QUERY_ONLY_FIELD)
