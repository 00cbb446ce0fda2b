"""The answer page's section of nugget assignment (assessor.registry.AnswerPanel): every assigner's label of
each nugget the answer was judged against, a table per nugget list, the nuggets assigners label differently
marked."""

from typing import Any

from assessor.collection.answer_labels import (
    PROVENANCE_RELATED,
    ItemRow,
    LabelCell,
    LabelTable,
    label_table,
    made_by,
    provisional_annotation,
)
from assessor.models import Answer
from assignment.models import AssignmentLabel


def _cell(label: AssignmentLabel) -> LabelCell:
    return LabelCell(label=label.label, css=label.label, made_by=made_by(label), note=label.get_assigner_kind_display())


def _nugget_detail(position: int, importance: str) -> str:
    return f"nugget {position + 1}" + (f", {importance}" if importance else "")


def _table(nugget_set: str, labels: list[AssignmentLabel]) -> LabelTable:
    nuggets = sorted({label.nugget for label in labels}, key=lambda nugget: nugget.position)
    rows = [
        ItemRow(key=nugget.pk, text=nugget.text, cells=[], detail=_nugget_detail(nugget.position, nugget.importance))
        for nugget in nuggets
    ]
    return label_table(
        title=f"Nugget list {nugget_set}",
        labels=labels,
        item=lambda label: label.nugget_id,
        cell=_cell,
        rows=rows,
        anchor=f"assign-{nugget_set}",
    )


def answer_panel_context(answer: Answer) -> dict[str, Any] | None:
    """The registry's `AnswerPanel.context`: a table per nugget list the answer's labels are against; None when
    no assigner labelled it."""
    labels = list(
        AssignmentLabel.objects.filter(answer=answer)
        .annotate(**provisional_annotation())
        .select_related("nugget", "nugget__nugget_set", *PROVENANCE_RELATED)
    )
    if not labels:
        return None
    by_set: dict[str, list[AssignmentLabel]] = {}
    for label in labels:
        by_set.setdefault(label.nugget.nugget_set.name, []).append(label)
    return {"tables": [_table(name, by_set[name]) for name in sorted(by_set)]}
