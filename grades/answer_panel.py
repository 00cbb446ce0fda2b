"""The report page's section of grades (assessor.registry.AnswerPanel): every grade source's grade, 0 to 5, of
each question of the banks the report was graded on, a table per bank, with the LLM's reasoning; the questions
two sources grade differently marked."""

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
from grades.models import GradeLabel


def _note(label: GradeLabel) -> str:
    parts = []
    if label.confidence is not None:
        parts.append(f"confidence {label.confidence:.2f}")
    if label.document:
        graded = f" ({label.document_grade})" if label.document_grade is not None else ""
        parts.append(f"document {label.document}{graded}")
    return ", ".join(parts)


def _cell(label: GradeLabel) -> LabelCell:
    return LabelCell(
        label=str(label.label),
        css=f"grade-{label.label}",
        made_by=made_by(label),
        reasoning=label.reasoning,
        note=_note(label),
    )


def _table(bank: str, labels: list[GradeLabel]) -> LabelTable:
    questions = sorted({label.nugget for label in labels}, key=lambda question: question.position)
    rows = [
        ItemRow(key=question.pk, text=question.text, cells=[], detail=f"question {question.position + 1}")
        for question in questions
    ]
    return label_table(
        title=f"Question bank {bank}",
        labels=labels,
        item=lambda label: label.nugget_id,
        cell=_cell,
        rows=rows,
        anchor=f"grades-{bank}",
    )


def answer_panel_context(answer: Answer) -> dict[str, Any] | None:
    """The registry's `AnswerPanel.context`: a table per question bank the report's grades are on; None when no
    source graded it."""
    labels = list(
        GradeLabel.objects.filter(answer=answer)
        .annotate(**provisional_annotation())
        .select_related("nugget", "nugget__nugget_set", *PROVENANCE_RELATED)
    )
    if not labels:
        return None
    by_bank: dict[str, list[GradeLabel]] = {}
    for label in labels:
        by_bank.setdefault(label.nugget.nugget_set.name, []).append(label)
    return {"tables": [_table(name, by_bank[name]) for name in sorted(by_bank)]}
