"""The topic picker of the organizers' "give topics" forms: a checkbox a topic, with its state.

Progressive enhancement: without JavaScript it is a plain list of checkboxes (and a
box to paste ids into); the script adds the filter box. Whatever is posted goes
through the same validation as typed ids (`topics_parse`): unknown ids are refused by name.
A box shows and posts the topic's id as the campaign's files give it (`published_id`), as one types it.
"""

from collections import defaultdict
from dataclasses import dataclass, field
from typing import Any

from django import forms
from django.template.loader import render_to_string
from django.utils.safestring import SafeString, mark_safe

from assessor.models import AssessorWork, Qrel, Topic
from assessor.models.keys import published_id


@dataclass
class TopicChoice:
    topic_id: str  # as the campaign's files give it
    query: str
    # Relevant segments (grade 1 or more) by qrels source, e.g. [("nist", 12)].
    relevant: list[tuple[str, int]] = field(default_factory=list)
    # The work already given on the topic: (kind as shown, assessor, status as shown).
    work: list[tuple[str, str, str]] = field(default_factory=list)


def topic_choices() -> list[TopicChoice]:
    """Every topic with its relevant segments per source and the work given on it, in three queries."""
    # By stored key while the rows are read; each choice shows the published id.
    choices = {key: TopicChoice(published_id(key), query) for key, query in Topic.objects.values_list("id", "query")}
    relevant: dict[str, dict[str, int]] = defaultdict(dict)
    counts = (
        Qrel.objects.filter(grade__gte=Qrel.RELEVANT_MIN_GRADE)
        .values_list("topic_id", "source__name")
        .order_by("topic_id", "source__name")
    )
    for topic_id, source in counts:
        relevant[topic_id][source] = relevant[topic_id].get(source, 0) + 1
    for topic_id, by_source in relevant.items():
        if topic_id in choices:
            choices[topic_id].relevant = sorted(by_source.items())
    work = AssessorWork.objects.select_related("assessor").order_by("topic_id", "kind", "assessor__username")
    for item in work:
        if item.topic_id in choices:
            choices[item.topic_id].work.append(
                (item.kind_label, item.assessor.get_username(), item.get_status_display())
            )
    return sorted(choices.values(), key=lambda choice: choice.topic_id)


class TopicPicker(forms.Widget):
    """Checkboxes named like the field, and a `<name>_typed` box for ids pasted in; both are joined."""

    template_name = "work/topic_picker.html"

    def value_from_datadict(self, data: Any, files: Any, name: str) -> str:
        ticked = data.getlist(name) if hasattr(data, "getlist") else [data.get(name, "")]
        typed = data.get(f"{name}_typed", "")
        return " ".join(value for value in [*ticked, typed] if value)

    def value_omitted_from_data(self, data: Any, files: Any, name: str) -> bool:
        return name not in data and f"{name}_typed" not in data

    def get_context(self, name: str, value: Any, attrs: dict | None) -> dict[str, Any]:
        context = super().get_context(name, value, attrs)
        chosen = set(str(value or "").replace(",", " ").split())
        choices = topic_choices()
        known = {choice.topic_id for choice in choices}
        context["widget"].update(
            choices=choices,
            chosen=chosen,
            # Ids typed earlier that are not topics stay in the box, so the error can be fixed there.
            typed=" ".join(sorted(chosen - known)),
        )
        return context

    def render(self, name: str, value: Any, attrs: dict | None = None, renderer: Any = None) -> SafeString:
        # The project's templates folder, not the form renderer's (which sees only apps' and Django's).
        return mark_safe(render_to_string(self.template_name, self.get_context(name, value, attrs)))
