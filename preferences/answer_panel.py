"""The report page's section of preferences (assessor.registry.AnswerPanel): the pairs this report took part
in, each source's preference read from this report's side (this one better, the other, a tie), with the LLM's
reasoning; the pairs two sources decide differently marked. A source keeps a pair in the order it was shown,
which may differ from another's: the labels are turned to this report's side before they are compared."""

from typing import Any

from django.db.models import Q
from django.urls import reverse

from assessor.collection.answer_labels import (
    PROVENANCE_RELATED,
    ItemRow,
    LabelCell,
    label_table,
    made_by,
    provisional_annotation,
)
from assessor.models import Answer
from preferences.models import Preference, PreferenceLabel

THIS_BETTER, OTHER_BETTER, TIE, NONE = "this better", "other better", "tie", "no preference"


def preference_seen_from(label: PreferenceLabel, answer_id: int) -> str:
    """The label as this report's side reads it."""
    if label.label is None:
        return NONE
    if label.label == Preference.TIE:
        return TIE
    first_won = label.label == Preference.FIRST
    return THIS_BETTER if first_won == (label.first_id == answer_id) else OTHER_BETTER


def _other(label: PreferenceLabel, answer_id: int) -> int:
    return label.second_id if label.first_id == answer_id else label.first_id


def _cell(label: PreferenceLabel, answer_id: int) -> LabelCell:
    seen = preference_seen_from(label, answer_id)
    shown = "shown first" if label.first_id == answer_id else "shown second"
    confidence = f", confidence {label.confidence:.2f}" if label.confidence is not None else ""
    css = {THIS_BETTER: "support", OTHER_BETTER: "not_support", TIE: "partial_support"}.get(seen, "")
    return LabelCell(
        label=seen,
        css=css,
        made_by=made_by(label),
        reasoning=label.reasoning,
        note=f"{shown}{confidence}",
        compared=seen != NONE,  # a reply that named no preference agrees or disagrees with none
    )


def answer_panel_context(answer: Answer) -> dict[str, Any] | None:
    """The registry's `AnswerPanel.context`: a row per other report this one was compared with; None when it
    took part in no pair."""
    labels = list(
        PreferenceLabel.objects.filter(Q(first=answer) | Q(second=answer))
        .annotate(**provisional_annotation())
        .select_related(*PROVENANCE_RELATED)
    )
    if not labels:
        return None
    others = {_other(label, answer.pk) for label in labels}
    runs = dict(Answer.objects.filter(pk__in=others).values_list("pk", "run__run_id"))
    rows = [
        ItemRow(
            key=other,
            text=f"against {runs.get(other, other)}",
            cells=[],
            href=reverse("collection:answer", args=[other]),
        )
        for other in sorted(others, key=lambda other: runs.get(other, ""))
    ]
    table = label_table(
        title="Pairs",
        labels=labels,
        item=lambda label: _other(label, answer.pk),
        cell=lambda label: _cell(label, answer.pk),
        rows=rows,
        anchor="preferences",
    )
    return {"tables": [table]}
