"""What the fake LLM server's rules share: reading a prompt's lines and DSPy's sections, writing DSPy's answer.

Each app registers how the fake server (`bench/fake_llm.py`) answers its prompts (`registry.FakeAnswer`), in its
`fake_answers.py`; the tests work the rules out again independently. Never used by a real job.
"""

import ast
import json
import re

WORD = re.compile(r"[A-Za-z0-9']+")
SENTENCE_END = re.compile(r"(?<=[.!?])\s+")
SECTION = re.compile(r"^\[\[ ## (\w+) ## \]\]\n(.*?)(?=^\[\[ ## |^Respond with|\Z)", re.MULTILINE | re.DOTALL)


def line_after(text: str, prefix: str) -> str:
    for line in text.splitlines():
        if line.startswith(prefix):
            return line[len(prefix) :]
    return ""


def list_after(text: str, prefix: str) -> list:
    """The list written on the line after `prefix`: JSON, as the project writes it, or a Python literal, as
    nuggetizer writes its nugget lists (`str(list)`: single quotes)."""
    written = line_after(text, prefix) or "[]"
    try:
        value = json.loads(written)
    except json.JSONDecodeError:
        value = ast.literal_eval(written)
    if not isinstance(value, list):
        raise ValueError(f"{prefix.strip()} is not a list: {written[:80]!r}")
    return value


def long_words(text: str) -> set[str]:
    return {word.lower() for word in WORD.findall(text) if len(word) >= 4}


def first_words(text: str, count: int = 6) -> str:
    return " ".join(WORD.findall(text)[:count])


def sections(user: str) -> dict[str, str]:
    """DSPy's input fields, `[[ ## name ## ]]` then the text, by name."""
    return {name: text.strip() for name, text in SECTION.findall(user)}


def dspy_answer(reasoning: str, **fields: str) -> str:
    parts = [f"[[ ## reasoning ## ]]\n{reasoning}"] + [f"[[ ## {name} ## ]]\n{value}" for name, value in fields.items()]
    return "\n\n".join(parts + ["[[ ## completed ## ]]"])
