"""Strict parsing of LLM answers (pure: no ORM, no I/O).

A model's list may come fenced, in Python or JSON syntax, with prose around
it; those are read. Everything else that is wrong (no list, several lists,
non-strings, a wrong length, an unknown label) raises AnswerUnusable with the
reason, which the caller sends back to the model in a re-ask. Nothing is ever
guessed: a label is accepted only when it is, up to case, spacing and quotes,
one of the allowed ones.
"""

import ast
import json
import re

FENCE = re.compile(r"```[A-Za-z0-9_-]*\s*\n?(.*?)```", re.DOTALL)


class AnswerUnusable(ValueError):
    """The answer could not be read; `reason` says why, in words a model can act on."""

    def __init__(self, reason: str):
        self.reason = reason
        super().__init__(reason)


def _unfence(raw: str) -> str:
    blocks = FENCE.findall(raw)
    if len(blocks) > 1:
        raise AnswerUnusable("the answer holds several code blocks; return exactly one list")
    if blocks:
        return blocks[0].strip()
    # An opening fence the model never closed.
    return re.sub(r"^```[A-Za-z0-9_-]*\s*", "", raw.strip()).strip()


def _outside_fence(raw: str) -> str:
    """The prose around the one code block, where a model may have written another list."""
    return FENCE.sub(" ", raw)


def _bracketed_spans(text: str) -> list[str]:
    """The top-level [...] spans of `text`, skipping brackets inside quoted strings."""
    spans: list[str] = []
    depth = 0
    start = -1
    quote = ""
    escaped = False
    for index, char in enumerate(text):
        if quote:
            if escaped:
                escaped = False
            elif char == "\\":
                escaped = True
            elif char == quote:
                quote = ""
            continue
        if char in "\"'" and depth > 0:
            # An apostrophe inside prose outside a list is not a quote.
            quote = char
        elif char == "[":
            if depth == 0:
                start = index
            depth += 1
        elif char == "]" and depth > 0:
            depth -= 1
            if depth == 0:
                spans.append(text[start : index + 1])
    return spans


def _literal_list(span: str) -> list | None:
    try:
        value = json.loads(span)
    except ValueError:
        try:
            value = ast.literal_eval(span)
        except (ValueError, SyntaxError, MemoryError, RecursionError):
            return None
    except RecursionError:
        return None
    return value if isinstance(value, list) else None


def _lists_of_strings(text: str) -> list[list]:
    return [
        value
        for value in map(_literal_list, _bracketed_spans(text))
        if value is not None and all(isinstance(item, str) for item in value)
    ]


def parse_string_list(raw: str) -> list[str]:
    """The one list of strings in an answer (fenced or not, prose around it allowed).

    Two lists are ambiguous wherever they stand (a model correcting itself
    writes its second thought after the first): the answer is refused, never
    one of them picked.
    """
    raw = raw or ""
    text = _unfence(raw)
    if FENCE.search(raw) and _lists_of_strings(_outside_fence(raw)):
        raise AnswerUnusable("the answer holds several lists, in and out of its code block; return exactly one list")
    lists = [value for value in map(_literal_list, _bracketed_spans(text)) if value is not None]
    if not lists:
        raise AnswerUnusable('the answer holds no list; return only a list in the form ["a", "b", ...]')
    if len(lists) > 1:
        # Prose may cite "[1]"; the answer is the one list of strings, if there is exactly one.
        lists = [value for value in lists if all(isinstance(item, str) for item in value)]
        if len(lists) != 1:
            raise AnswerUnusable("the answer holds several lists; return exactly one list")
    items = lists[0]
    for position, item in enumerate(items, start=1):
        if not isinstance(item, str):
            raise AnswerUnusable(f"item {position} is not a string ({item!r}); every item must be a quoted string")
    return [item.strip() for item in items]


def parse_nugget_list(raw: str, *, max_nuggets: int) -> list[str]:
    nuggets = parse_string_list(raw)
    empty = [position for position, text in enumerate(nuggets, start=1) if not text]
    if empty:
        raise AnswerUnusable(f"nugget {empty[0]} is empty; every nugget must be a short statement")
    if len(nuggets) > max_nuggets:
        # Cutting the list would drop nuggets the model ranked; ask again instead.
        raise AnswerUnusable(f"the list has {len(nuggets)} nuggets; it must have at most {max_nuggets}")
    return nuggets


LABEL_SEPARATORS = re.compile(r"[\s-]+")


def _normal_label(text: str) -> str:
    return LABEL_SEPARATORS.sub("_", text.strip().strip("\"'`.").strip().lower())


def parse_label_list(raw: str, *, expected: int, allowed: tuple[str, ...]) -> list[str]:
    """Exactly `expected` labels, each one of `allowed`, in order."""
    labels = parse_string_list(raw)
    if len(labels) != expected:
        raise AnswerUnusable(f"the list has {len(labels)} labels; it must have exactly {expected}, one per nugget")
    by_normal = {_normal_label(label): label for label in allowed}
    result = []
    for position, label in enumerate(labels, start=1):
        known = by_normal.get(_normal_label(label))
        if known is None:
            raise AnswerUnusable(f"label {position} ({label!r}) is not one of: {', '.join(allowed)}")
        result.append(known)
    return result


def parse_single_label(raw: str, *, allowed: tuple[str, ...]) -> str:
    """An answer that is one label and nothing else (quotes, a fence, a final period tolerated)."""
    text = _unfence(raw or "")
    text = text.strip().strip("[]").strip()
    by_normal = {_normal_label(label): label for label in allowed}
    known = by_normal.get(_normal_label(text))
    if known is None:
        shown = text if len(text) <= 80 else text[:77] + "..."
        raise AnswerUnusable(f"the answer ({shown!r}) is not exactly one of: {', '.join(allowed)}")
    return known


FINAL_SCORE = re.compile(r"##\s*final\s+score\s*:\s*([^\s#]*)", re.IGNORECASE)


def parse_final_score(raw: str, *, allowed: range) -> int:
    """The grade of an answer in UMBRELA's form `##final score: N` (prose around it allowed).

    Every `##final score:` in the answer must name the same integer of `allowed`;
    an answer with none, a non-integer, a grade out of range, or two different
    grades is not a grade.
    """
    found = FINAL_SCORE.findall(raw or "")
    if not found:
        raise AnswerUnusable("the answer holds no '##final score: N'; end with ##final score: followed by the grade")
    grades = set()
    for value in found:
        value = value.strip(".,;*")
        if not re.fullmatch(r"\d+", value) or int(value) not in allowed:
            raise AnswerUnusable(
                f"the final score ({value!r}) is not an integer from {allowed.start} to {allowed.stop - 1}"
            )
        grades.add(int(value))
    if len(grades) > 1:
        raise AnswerUnusable(f"the answer gives several final scores ({', '.join(map(str, sorted(grades)))}); give one")
    return grades.pop()


NEGATION = r"(?:not|never|n't|without)\s+(?:an?\s+|the\s+)?"


def parse_one_phrase(raw: str, *, phrases: tuple[str, ...]) -> str:
    """The one of `phrases` the answer names (up to case and spacing); none, or more than one, is not an answer.

    A phrase the answer negates ("not full support") is not named: that answer says what the label is not.
    """
    text = re.sub(r"\s+", " ", raw or "").lower()
    named = [phrase for phrase in phrases if re.search(rf"\b{re.escape(phrase.lower())}\b", text)]
    negated = [phrase for phrase in named if re.search(rf"{NEGATION}{re.escape(phrase.lower())}\b", text)]
    if negated:
        shown = raw.strip() if len(raw.strip()) <= 80 else raw.strip()[:77] + "..."
        raise AnswerUnusable(f"the answer ({shown!r}) negates \"{negated[0]}\"; name exactly one label, not what it is not")
    if len(named) != 1:
        shown = raw.strip() if len(raw.strip()) <= 80 else raw.strip()[:77] + "..."
        how = "none" if not named else "more than one"
        options = ", ".join(f'"{phrase}"' for phrase in phrases)
        raise AnswerUnusable(f"the answer ({shown!r}) names {how} of {options}; name exactly one")
    return named[0]
