"""The prompt templates, stored as versioned PromptTemplate rows.

The nuggetization, importance and assignment prompts are the published ones
(PROTOCOL.md, "The published prompts"), word for word; the support and
relevance prompts are written from the protocol's definitions. A template is
stored by the hash of its text: editing a text here makes a new version at
the next use, and results keep the version that made them.

Fields are filled with str.format; the values (queries, passages) are never
themselves formatted, so braces in a passage are harmless.
"""

import hashlib
import json
from dataclasses import dataclass

from django.db import IntegrityError, transaction
from django.db.models import Max

from assessor.models import PromptTemplate


@dataclass(frozen=True)
class PromptText:
    name: str
    system: str
    user: str


NUGGETIZE = PromptText(
    name="nuggetize",
    system=(
        "You are NuggetizeLLM, an intelligent assistant that can update a list of atomic nuggets to best "
        "provide all the information required for the query."
    ),
    user=(
        "Update the list of atomic nuggets of information (1-12 words), if needed, so they best provide the "
        "information required for the query. Leverage only the initial list of nuggets (if exists) and the "
        "provided context (this is an iterative process). Return only the final list of all nuggets in a "
        "Pythonic list format (even if no updates). Make sure there is no redundant information. Ensure the "
        "updated nugget list has at most 30 nuggets (can be less), keeping only the most vital ones. "
        "Order them in decreasing order of importance. Prefer nuggets that provide more interesting information.\n"
        "Search Query: {query}\n"
        "Context:\n"
        "{context}\n"
        "Search Query: {query}\n"
        "Initial Nugget List: {nuggets}\n"
        "Initial Nugget List Length: {count}\n"
        "Only update the list of atomic nuggets (if needed, else return as is). Do not explain. Always answer "
        'in short nuggets (not questions). List in the form ["a", "b", ...] and a and b are strings with no '
        'mention of ".\n'
        "Updated Nugget List:"
    ),
)

IMPORTANCE = PromptText(
    name="nugget_importance",
    system=(
        "You are NuggetizeScoreLLM, an intelligent assistant that can label a list of atomic nuggets based on "
        "their importance for a given search query."
    ),
    user=(
        "Based on the query, label each of the {n} nuggets either a vital or okay based on the following "
        'criteria. Vital nuggets represent concepts that must be present in a "good" answer; on the other hand, '
        "okay nuggets contribute worthwhile information about the target but are not essential. Return the list "
        "of labels in a Pythonic list format (type: List[str]). The list should be in the same order as the "
        "input nuggets. Make sure to provide a label for each nugget.\n"
        "Search Query: {query}\n"
        "Nugget List: {nuggets}\n"
        "Only return the list of labels (List[str]). Do not explain.\n"
        "Labels:"
    ),
)

ASSIGN = PromptText(
    name="assign",
    system=(
        "You are NuggetizeAssignerLLM, an intelligent assistant that can label a list of atomic nuggets based "
        "on if they are captured by a given passage."
    ),
    user=(
        "Based on the query and passage, label each of the {n} nuggets either as support, partial_support, or "
        "not_support using the following criteria. A nugget that is fully captured in the passage should be "
        "labeled as support. A nugget that is partially captured in the passage should be labeled as "
        "partial_support. If the nugget is not captured at all, label it as not_support. Return the list of "
        "labels in a Pythonic list format (type: List[str]). The list should be in the same order as the input "
        "nuggets. Make sure to provide a label for each nugget.\n"
        "Search Query: {query}\n"
        "Passage: {passage}\n"
        "Nugget List: {nuggets}\n"
        "Only return the list of labels (List[str]). Do not explain.\n"
        "Labels:"
    ),
)

SUPPORT = PromptText(
    name="support",
    system=(
        "You are SupportJudgeLLM, an intelligent assistant that judges whether a cited passage supports a "
        "sentence of an answer."
    ),
    user=(
        "Judge whether the passage supports the sentence, using the following labels. FS (full support): all "
        "the information in the sentence is supported by the passage. PS (partial support): some of the "
        "information in the sentence is supported by the passage, some is not. NS (no support): the passage "
        "does not support any part of the sentence. Judge only from the passage, not from what you know.\n"
        "Search Query: {query}\n"
        "Sentence: {sentence}\n"
        "Passage: {passage}\n"
        "Answer with exactly one label: FS, PS or NS. Do not explain.\n"
        "Label:"
    ),
)

UMBRELA = PromptText(
    name="umbrela",
    system=(
        "You are RelevanceJudgeLLM, an intelligent assistant that judges how relevant a passage is to a "
        "search query."
    ),
    user=(
        "Given a query and a passage, grade the relevance of the passage to the query on this scale:\n"
        "3 = perfectly relevant: the passage is dedicated to the query and contains the exact answer.\n"
        "2 = highly relevant: the passage has some answer for the query, but the answer may be a bit unclear "
        "or hidden amongst extraneous information.\n"
        "1 = related: the passage seems related to the query but does not answer it.\n"
        "0 = irrelevant: the passage has nothing to do with the query.\n"
        "Consider the intent of the query, how well the passage matches it, and how trustworthy the passage "
        "is, then grade.\n"
        "Search Query: {query}\n"
        "Passage: {passage}\n"
        "Answer with exactly one grade: 0, 1, 2 or 3. Do not explain.\n"
        "Grade:"
    ),
)

PROMPTS: dict[str, PromptText] = {prompt.name: prompt for prompt in (NUGGETIZE, IMPORTANCE, ASSIGN, SUPPORT, UMBRELA)}


def prompt_sha256(prompt: PromptText) -> str:
    return hashlib.sha256(json.dumps([prompt.system, prompt.user]).encode()).hexdigest()


def prompt_template_get(name: str, *, text: PromptText | None = None) -> PromptTemplate:
    """The stored version of the current text of prompt `name`, created (as the next version) if new."""
    text = text or PROMPTS[name]
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
