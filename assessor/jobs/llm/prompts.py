"""Prompt templates, stored as versioned PromptTemplate rows.

Each app keeps the texts of the prompts its jobs send (`<app>/prompts.py`) and
declares them with its job kinds in the registry. A template is stored by the
hash of its text: editing a text makes a new version at the next use, and
results keep the version that made them.

Fields are filled with str.format; the values (queries, passages) are never
themselves formatted, so braces in a passage are harmless.
"""

import hashlib
import json
from dataclasses import dataclass

from django.db import IntegrityError, transaction
from django.db.models import Max

from assessor.models import PromptTemplate
from assessor.registry import registry


@dataclass(frozen=True)
class PromptText:
    name: str
    system: str
    user: str


def prompt_sha256(prompt: PromptText) -> str:
    return hashlib.sha256(json.dumps([prompt.system, prompt.user]).encode()).hexdigest()


def prompt_template_get(name: str, *, text: PromptText | None = None) -> PromptTemplate:
    """The stored version of the current text of prompt `name`, created (as the next version) if new."""
    text = text or registry.prompt(name)
    digest = prompt_sha256(text)
    for _attempt in range(5):
        stored = PromptTemplate.objects.filter(name=name, sha256=digest).first()
        if stored is not None:
            return stored
        latest = PromptTemplate.objects.filter(name=name).aggregate(latest=Max("version"))["latest"] or 0
        try:
            with transaction.atomic():
                return PromptTemplate.objects.create(
                    name=name, version=latest + 1, system=text.system, user=text.user, sha256=digest
                )
        except IntegrityError:
            # Another process stored it (or took the version number) first: look again.
            continue
    raise RuntimeError(f"could not store prompt {name!r}")


def prompt_messages(template: PromptTemplate, **fields: object) -> list[dict[str, str]]:
    return [
        {"role": "system", "content": template.system},
        {"role": "user", "content": template.user.format(**fields)},
    ]


def as_list_text(items: list[str]) -> str:
    """A list the way the published prompts show it: ["a", "b"]."""
    return json.dumps(items, ensure_ascii=False)
