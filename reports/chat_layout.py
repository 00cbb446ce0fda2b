"""The chat layout of the second family's prompts: DSPy's ChatAdapter, as PrefNugget's reference sends it.

A user message is the input fields as `[[ ## name ## ]]` sections; the model answers in the same
sections (`reasoning` first, then the output fields, then `[[ ## completed ## ]]`). Reading an answer
takes each section's text up to the next header, stripped; a field given twice keeps its first text.
"""

import re

from assessor.jobs.llm.parsing import AnswerUnusable

HEADER = re.compile(r"^\[\[ ## (\w+) ## \]\]", re.MULTILINE)


def answer_sections(raw: str) -> dict[str, str]:
    """Each `[[ ## name ## ]]` section of an answer: name -> its text (stripped)."""
    found: dict[str, str] = {}
    headers = list(HEADER.finditer(raw))
    for index, header in enumerate(headers):
        end = headers[index + 1].start() if index + 1 < len(headers) else len(raw)
        found.setdefault(header.group(1), raw[header.end() : end].strip())
    return found


def answer_field(raw: str, name: str) -> str:
    """The text of the answer's `name` section; an answer without one (or with it empty) is unusable."""
    value = answer_sections(raw).get(name)
    if value is None:
        raise AnswerUnusable(f"the answer has no [[ ## {name} ## ]] section; answer in the sections asked for")
    if not value:
        raise AnswerUnusable(f"the answer's [[ ## {name} ## ]] section is empty")
    return value


def answer_float(raw: str, name: str) -> float | None:
    """A float field (a confidence) if the answer gives one that reads as a number, else None."""
    value = answer_sections(raw).get(name, "")
    try:
        return float(value)
    except ValueError:
        return None
