"""The answer page's section of support (assessor.registry.AnswerPanel): every method's label of each citation
(does the cited segment support its sentence? FS, PS, NS), the citations methods label differently marked on
their sentence too."""

from typing import Any

from assessor.collection.answer_labels import (
    PROVENANCE_RELATED,
    ItemRow,
    LabelCell,
    label_table,
    made_by,
    provisional_annotation,
)
from assessor.models import Answer, Citation
from support.models import SupportLabel
from support.study import LABEL_NAMES

SUPPORT_CODES: dict[int, str] = {int(value): code for value, code in LABEL_NAMES.items()} | {
    int(SupportLabel.Label.UNJUDGED): "unjudged"
}


def _cell(label: SupportLabel) -> LabelCell:
    code = SUPPORT_CODES.get(label.label, str(label.label))
    shown = f", shown {SUPPORT_CODES.get(label.shown_label, '?')}" if label.shown_label is not None else ""
    return LabelCell(
        label=code,
        css=code.lower(),
        made_by=made_by(label),
        note=f"{label.get_method_kind_display()}{shown}",
        # An unjudged citation agrees or disagrees with no method.
        compared=label.label != SupportLabel.Label.UNJUDGED,
    )


def _rows(answer: Answer) -> list[ItemRow]:
    citations = Citation.objects.filter(sentence__answer=answer).order_by("sentence__index", "position")
    return [
        ItemRow(
            key=pk,
            text=f"sentence {index}, citation {position + 1}: {f'[{rank}] ' if rank is not None else ''}{docid}",
            cells=[],
            detail=text if len(text) <= 90 else f"{text[:89]}…",
            sentence_index=index,
        )
        for pk, index, position, rank, docid, text in citations.values_list(
            "pk", "sentence__index", "position", "reference_rank", "segment_id", "sentence__text"
        )
    ]


def answer_panel_context(answer: Answer) -> dict[str, Any] | None:
    """The registry's `AnswerPanel.context`: a table of the answer's citations by method; None when no method
    judged any."""
    labels = list(
        SupportLabel.objects.filter(citation__sentence__answer=answer)
        .annotate(**provisional_annotation())
        .select_related(*PROVENANCE_RELATED)
    )
    if not labels:
        return None
    table = label_table(
        title="Citations", labels=labels, item=lambda label: label.citation_id, cell=_cell, rows=_rows(answer),
        anchor="support",
    )  # fmt: skip
    return {"tables": [table]}
