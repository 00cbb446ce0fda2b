"""Reading the bank prompts' answers, as the reference's converters read them.

Both answers carry a list of questions in one `[[ ## name ## ]]` section, written as a JSON array (a Python
list literal is read too, as DSPy reads one). An answer without the section, or with it empty, is asked
again.
- Contrastive extraction (`differentiating_questions`): a value that is not a list (null included: the
  reference's converter refuses it as "LLM did not follow instructions") is asked again; the questions kept
  are its first 2 strings that are not empty once stripped.
- The query-only bank (`questions`): a JSON array is read item by item (each item as text, stripped, empty
  ones dropped); anything else is split into its non-empty lines, as the reference's converter falls back.
"""

import ast
import json
from dataclasses import dataclass

from assessor.jobs.llm.parsing import AnswerUnusable
from prefnugget.contrastive import QUESTIONS_PER_PAIR, kept_questions
from reports.chat_layout import answer_field, answer_float, answer_sections

EXTRACT_FIELD = "differentiating_questions"
QUERY_ONLY_FIELD = "questions"


@dataclass(frozen=True)
class Questions:
    questions: list[str]
    reasoning: str
    confidence: float | None


def _literal(value: str) -> object:
    try:
        return json.loads(value)
    except ValueError:
        pass
    try:
        return ast.literal_eval(value)
    except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
        raise AnswerUnusable(f"the value {value[:80]!r} is not a JSON array") from None


def extracted_read(raw: str, *, keep: int = QUESTIONS_PER_PAIR) -> Questions:
    value = _literal(answer_field(raw, EXTRACT_FIELD))
    if not isinstance(value, list):
        raise AnswerUnusable(
            f"the [[ ## {EXTRACT_FIELD} ## ]] section holds {type(value).__name__}, not a JSON array of questions"
        )
    return Questions(
        kept_questions(value, keep=keep), answer_sections(raw).get("reasoning", ""), answer_float(raw, "confidence")
    )


def query_only_read(raw: str) -> Questions:
    value = answer_field(raw, QUERY_ONLY_FIELD)
    try:
        parsed = json.loads(value)
    except ValueError:
        parsed = None
    if isinstance(parsed, list):
        questions = [str(item).strip() for item in parsed if item]
    else:
        questions = [line.strip() for line in value.split("\n") if line.strip()]
    questions = [question for question in questions if question]
    return Questions(questions, answer_sections(raw).get("reasoning", ""), answer_float(raw, "confidence"))
