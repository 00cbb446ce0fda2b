"""One answer through every judge's eyes: its sentences and citations, then every app's section of labels.

The apps' sections are registered (assessor.registry.AnswerPanel); the page gathers, from their tables, the
items two sources disagree on: listed at the top, each a link to its row, and marked on the sentence they
belong to.
"""

from dataclasses import dataclass, field
from typing import Any

from assessor.collection.answer_labels import ItemRow, LabelTable
from assessor.collection.selectors import AnswerView, answer_views
from assessor.models import Answer
from assessor.models.scope import scoped_campaign
from assessor.registry import registry


@dataclass(frozen=True)
class AnswerSection:
    title: str
    template: str
    context: dict[str, Any]
    anchor: str


@dataclass(frozen=True)
class Disagreement:
    section: str
    table: str
    row: ItemRow


@dataclass
class AnswerPage:
    answer: Answer
    view: AnswerView
    sections: list[AnswerSection] = field(default_factory=list)
    disagreements: list[Disagreement] = field(default_factory=list)

    @property
    def disagreeing_sentences(self) -> set[int]:
        return {item.row.sentence_index for item in self.disagreements if item.row.sentence_index is not None}

    @property
    def sentences(self) -> list[tuple[Any, bool]]:
        """Each sentence view with whether an item of it is labelled differently."""
        marked = self.disagreeing_sentences
        return [(sentence, sentence.sentence.index in marked) for sentence in self.view.sentences]


def answer_page(answer: Answer) -> AnswerPage:
    """The answer's sentences and the sections of the apps with something to say of it, in their order."""
    page = AnswerPage(answer=answer, view=answer_views([answer])[0])
    campaign = scoped_campaign()
    # Numbered among all the apps' sections, so an anchor names one section whatever the campaign shows.
    for number, panel in enumerate(registry.answer_panels, start=1):
        if not registry.used_in(campaign, [panel]):
            continue
        context = panel.context(answer)
        if context is None:
            continue
        section = AnswerSection(title=panel.title, template=panel.template, context=context, anchor=f"panel-{number}")
        page.sections.append(section)
        tables: list[LabelTable] = context.get("tables", [])
        for table in tables:
            page.disagreements += [Disagreement(panel.title, table.title, row) for row in table.disagreeing]
    return page
