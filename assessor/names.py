"""The rule of every name an organizer gives: label sources, what a job produces, studies, score tables.

A name goes into addresses (`<slug:...>` routes, `?source=` links the
leaderboards build), file names and columns of 100 characters (LabelSource.name,
Job.output_name, Study.name): so it is 1 to 100 ASCII letters, digits, '-' and
'_'. A name outside the rule, once stored, broke every page that links to it
(a `/` answers 500 on the leaderboards and the run pages) and, past 100
characters, the write itself on PostgreSQL. The commands, the import services,
the job engine and the forms all ask `name_problem`, so the rule is stated here only.
"""

import re
from typing import Any

from django import forms
from django.core.exceptions import ValidationError

MAX_NAME_CHARS = 100  # LabelSource.name, Job.output_name, Study.name, ScoreTable.name
NAME_CHARACTERS = re.compile(r"[-a-zA-Z0-9_]+")
NAME_RULE = f"a name is 1 to {MAX_NAME_CHARS} characters, each a-z, A-Z, 0-9, '-' or '_'"
CHARACTER_NAMES = {"\n": "a newline", "\r": "a carriage return", "\t": "a tab", " ": "a space", "\x00": "a NUL byte"}


def _character_named(char: str) -> str:
    return CHARACTER_NAMES.get(char) or (repr(char) if char.isprintable() else f"the character U+{ord(char):04X}")


def name_problem(name: str) -> str:
    """What keeps `name` from being a name, ending with the rule ("" if nothing)."""
    if not name:
        return f"empty: {NAME_RULE}"
    if len(name) > MAX_NAME_CHARS:
        return f"{len(name):,} characters: {NAME_RULE}"
    if not NAME_CHARACTERS.fullmatch(name):
        char = next(char for char in name if not NAME_CHARACTERS.fullmatch(char))
        return f"{name!r} holds {_character_named(char)}: {NAME_RULE}"
    return ""


class NameRefused(ValueError):
    """A name outside the rule; the message names the option or field that gave it."""


def name_checked(name: str, *, option: str) -> str:
    """`name`, if it follows the rule; else NameRefused saying which `option` (--name, a field) gave it."""
    if problem := name_problem(name):
        raise NameRefused(f"{option}: {problem}")
    return name


def name_validate(value: str) -> None:
    """The rule as a form validator (the form names the field)."""
    if problem := name_problem(value):
        raise ValidationError(problem, code="invalid_name")


class NameField(forms.CharField):
    """A form's name field: the rule, with nothing typed left to `required` (an optional name may default)."""

    default_validators = [name_validate]

    def __init__(self, **kwargs: Any) -> None:
        # The length is the rule's to refuse (its message), not the field's own max_length.
        kwargs.pop("max_length", None)
        super().__init__(**kwargs)

    def widget_attrs(self, widget: forms.Widget) -> dict[str, Any]:
        return {**super().widget_attrs(widget), "maxlength": str(MAX_NAME_CHARS)}
