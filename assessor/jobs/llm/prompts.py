"""Prompt templates, stored as versioned PromptTemplate rows.

Each app keeps the texts of the prompts its jobs send (`<app>/prompts.py`) and
declares them with its job kinds in the registry. A template is stored by the
hash of its text: editing a text makes a new version at the next use, and
results keep the version that made them.

Fields are filled with str.format; the values (queries, passages) are never
themselves formatted, so braces in a passage are harmless. A prompt may carry
the sampling parameters it was published with (temperature, max_tokens...):
they are part of its version and are sent with every call, whatever the
installation's LLM_TEMPERATURE. A prompt with no system text is sent as one
user message, as the published relevance and support prompts were.
"""

import hashlib
import json
from pathlib import Path

from django.db import IntegrityError, transaction
from django.db.models import Max

from assessor.contracts import PromptText
from assessor.models import PromptTemplate
from assessor.registry import registry


def prompt_file(path: Path) -> str:
    """A published prompt, byte for byte (no newline translation, no stripping)."""
    return path.read_bytes().decode("utf-8")


def prompt_sha256(prompt: PromptText | PromptTemplate) -> str:
    params = dict(prompt.params)
    # Without parameters the material is the one the first versions were stored with.
    material = [prompt.system, prompt.user] + ([sorted(params.items())] if params else [])
    return hashlib.sha256(json.dumps(material).encode()).hexdigest()


def prompt_template_get(name: str, *, text: PromptText | None = None) -> PromptTemplate:
    """The stored version of the current text of prompt `name`, created (as the next version) if new."""
    text = text or registry.prompt(name)
    if text.earlier and not PromptTemplate.objects.filter(name=name).exists():
        for older in text.earlier:
            _template_store(name, older)
    return _template_store(name, text)


def _template_store(name: str, text: PromptText) -> PromptTemplate:
    digest = prompt_sha256(text)
    for _attempt in range(5):
        stored = PromptTemplate.objects.filter(name=name, sha256=digest).first()
        if stored is not None:
            return stored
        latest = PromptTemplate.objects.filter(name=name).aggregate(latest=Max("version"))["latest"] or 0
        try:
            with transaction.atomic():
                return PromptTemplate.objects.create(
                    name=name,
                    version=latest + 1,
                    system=text.system,
                    user=text.user,
                    params=dict(text.params),
                    sha256=digest,
                )
        except IntegrityError:
            # Another process stored it (or took the version number) first: look again.
            continue
    raise RuntimeError(f"could not store prompt {name!r}")


def prompt_messages(template: PromptTemplate, **fields: object) -> list[dict[str, str]]:
    """The messages of a first ask; fields a version does not use are ignored."""
    user = {"role": "user", "content": template.user.format(**fields)}
    if not template.system:
        return [user]
    return [{"role": "system", "content": template.system}, user]


def as_list_text(items: list[str]) -> str:
    """A list the way the published prompts show it: ["a", "b"]."""
    return json.dumps(items, ensure_ascii=False)
