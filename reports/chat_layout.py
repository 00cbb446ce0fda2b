"""The chat layout of the second family's prompts (DSPy's ChatAdapter, as PrefNugget's reference sends it), and
its answers read as the reference reads them: minima-llm 0.2.8's `TolerantChatAdapter`, the adapter the
PrefNugget starter kit runs DSPy with.

A user message is the input fields as `[[ ## name ## ]]` sections; the model answers in the same sections
(`reasoning` first, as DSPy's ChainOfThought asks, then the output fields, then `[[ ## completed ## ]]`).

The adapter's rules, restated (`answer_fields`):
- Headers: `[[ ## name ## ]]` in any case, with any spacing inside the brackets, anywhere in a line (text
  before it on the line belongs to the section before); the name is stripped, lower-cased, and its spaces
  become underscores (`[[## Better Passage ##]]` is `better_passage`).
- A section's text: its lines, each stripped, blank ones dropped, joined by newlines. A field given twice
  keeps its last text that says something; a text that is empty, `none` or `null` (any case) says nothing.
- A field that says nothing is missing: a required one is asked again; an optional one is None.
- A float field: the first number in its text (`0.8 (sure)` is 0.8); no number: asked again.
- A list field: a text starting `["` must be a JSON array; one starting `['` a Python list literal with an
  even number of unescaped single quotes (an odd one is an apostrophe: asked again); anything else must be
  a JSON array. Its items that are not empty, null, false or 0, each as text, stripped. Anything else
  (numbered lines, a fenced block, a trailing comma in JSON) is asked again.
- Any other field, a `Literal` of choices included (a preference's '1', '2', '0', a grade's '0'-'5'): its
  text as it is, not checked against the choices; the reference's converters then look for the first
  allowed digit in it.
Where the adapter raises, the reference asks again (DSPy and minima-llm's retries); here the answer is
unusable (AnswerUnusable), and the LLM client re-asks with the reason.

The judging apps' prompts answer `reasoning` (str) and one field (str or a Literal), with a `confidence`
(float) for the preference and grading prompts; every one of these is required in the reference's
signatures. Their readers call `answer_field` (the field, `reasoning` required beside it), `answer_float`
(a required float) and `answer_sections` (every section's text): together they refuse exactly the answers
the adapter refuses under those signatures.
"""

import ast
import json
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

from assessor.jobs.llm.parsing import AnswerUnusable

HEADER = re.compile(r"\[\[\s*##\s*(?P<name>[^#\]\r\n]+?)\s*##\s*\]\]", re.IGNORECASE)
SAYS_NOTHING = frozenset({"", "none", "null"})
NUMBER = re.compile(r"[-+]?[0-9]*\.?[0-9]+")
PYTHON_LIST_START = re.compile(r"\[\s*'")
UNESCAPED_QUOTE = re.compile(r"(?<!\\)'")

FieldValue = str | float | list[str] | None


@dataclass(frozen=True)
class OutputField:
    name: str
    kind: Literal["text", "float", "list"]
    optional: bool = False


# DSPy's ChainOfThought puts it before every signature's own output fields, as a required text.
REASONING = OutputField("reasoning", "text")


def field_name(header: str) -> str:
    """A header's field name as the adapter normalises it."""
    return header.strip().lower().replace(" ", "_")


def answer_sections(raw: str) -> dict[str, str]:
    """Each section's text, by field name, as the adapter cuts them; a field that says nothing is absent."""
    sections: list[tuple[str | None, list[str]]] = [(None, [])]
    for line in (line.strip() for line in raw.splitlines()):
        start = 0
        for header in HEADER.finditer(line):
            if before := line[start : header.start()].strip():
                sections[-1][1].append(before)
            sections.append((field_name(header.group("name")), []))
            start = header.end()
        if after := line[start:].strip():
            sections[-1][1].append(after)
    texts: dict[str, str] = {}
    for name, lines in sections:
        text = "\n".join(lines).strip()
        if name is not None and text.lower() not in SAYS_NOTHING:
            texts[name] = text  # a later section of the same name wins
    return texts


def _items(value: object, text: str) -> list[str]:
    if not isinstance(value, list):
        raise AnswerUnusable(f"{text[:80]!r} is not a JSON array")
    return [str(item).strip() for item in value if item]


def _json_list(text: str) -> list[str]:
    try:
        value = json.loads(text)
    except ValueError:
        raise AnswerUnusable(f"{text[:80]!r} is not a JSON array; answer with one, as the example shows") from None
    return _items(value, text)


def list_field(text: str) -> list[str]:
    """A list field's text as the adapter reads it (a JSON array, or a Python list literal in single quotes)."""
    text = text.strip()
    if PYTHON_LIST_START.match(text):
        if len(UNESCAPED_QUOTE.findall(text)) % 2:
            raise AnswerUnusable(f"{text[:80]!r} has unbalanced single quotes (an apostrophe?); use a JSON array")
        try:
            return _items(ast.literal_eval(text), text)
        except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
            raise AnswerUnusable(f"{text[:80]!r} is not a list; answer with a JSON array") from None
    return _json_list(text)


def float_field(text: str) -> float:
    """A float field's text as the adapter reads it: its first number."""
    found = NUMBER.search(text.strip())
    if found is None:
        raise AnswerUnusable(f"{text[:80]!r} is not a number; give a single float value")
    return float(found.group())


def _typed(field: OutputField, text: str) -> FieldValue:
    try:
        if field.kind == "float":
            return float_field(text)
        return list_field(text) if field.kind == "list" else text
    except AnswerUnusable as unusable:
        raise AnswerUnusable(f"the [[ ## {field.name} ## ]] section: {unusable.reason}") from None


def answer_fields(raw: str, fields: Sequence[OutputField]) -> dict[str, FieldValue]:
    """The answer's output fields, typed as the adapter types them; AnswerUnusable where it would fail."""
    texts = answer_sections(raw)
    absent = [field for field in fields if field.name not in texts]
    if any(not field.optional for field in absent):  # the message names the optional ones absent too
        sections = ", ".join(f"[[ ## {field.name} ## ]]" for field in absent)
        raise AnswerUnusable(f"the answer has no value in {sections}; answer in the sections asked for")
    return {field.name: _typed(field, texts[field.name]) if field.name in texts else None for field in fields}


def answer_field(raw: str, name: str) -> str:
    """The text of the answer's `name` field (required, a str or a Literal of choices), with the `reasoning`
    required beside it: unusable where either is missing or says nothing."""
    value = answer_fields(raw, (REASONING, OutputField(name, "text")))[name]
    assert isinstance(value, str)  # a required text field
    return value


def answer_float(raw: str, name: str) -> float:
    """A required float field (a confidence): the first number of its text; unusable where it is missing, says
    nothing or holds no number."""
    value = answer_fields(raw, (OutputField(name, "float"),))[name]
    assert isinstance(value, float)  # a required float field
    return value
