"""The LLM banks a bank post-edit can start from, each named with its provenance and size.

Post-editing a bank starts from one LLM bank of the topic (PrefNugget's, the query-only bank, one
from a file): which one changes what the assessor reads, so the organizer picks it, seeing what
made each one (the job and its model, the file, the person) and how many questions it holds. The
same words name, on the workspace and the organizer's topic page, the bank a post-edit started from.
"""

from collections import defaultdict
from dataclasses import dataclass, field

from django.db.models import Count

from assessor.models.keys import published_id
from nuggets.giving import BANK_DRAFT_KINDS
from nuggets.lifecycle import nugget_sets_counted_q
from nuggets.models import NuggetSet


@dataclass
class OfferedBank:
    """A bank name that some topics hold as a counted LLM bank: who made it, and its size on each topic."""

    name: str
    makers: list[str] = field(default_factory=list)
    sizes: dict[str, int] = field(default_factory=dict)

    @property
    def size_label(self) -> str:
        counts = sorted(set(self.sizes.values()))
        if len(self.sizes) == 1:
            (topic_id, count), *_ = self.sizes.items()
            return f"{_count(count, 'question')} (topic {published_id(topic_id)})"
        spread = str(counts[0]) if len(counts) == 1 else f"{counts[0]} to {counts[-1]}"
        return f"{spread} questions a topic, {len(self.sizes)} topics"

    @property
    def label(self) -> str:
        return f"{self.name}: {'; '.join(self.makers)}; {self.size_label}"


def _count(count: int, noun: str) -> str:
    return f"{count} {noun}{'' if count == 1 else 's'}"


def maker_label(nugget_set: NuggetSet) -> str:
    """What made a set, in words: the job and its model, the file, or the person."""
    if nugget_set.job is not None:
        return f"job {nugget_set.job_id}, model {nugget_set.job.model}"
    if nugget_set.imported_from is not None:
        return f"file {nugget_set.imported_from.file_name}"
    return f"made by {nugget_set.created_by}"


def llm_banks_offered(topic_ids: list[str] | None = None) -> list[OfferedBank]:
    """The counted LLM banks (kind auto or draft, form questions), by name, of the topics given (or of all)."""
    sets = (
        NuggetSet.objects.filter(form=NuggetSet.Form.QUESTIONS, kind__in=BANK_DRAFT_KINDS)
        .filter(nugget_sets_counted_q())
        .select_related("job", "imported_from", "created_by")
        .annotate(size=Count("nuggets"))
        .order_by("name", "topic_id")
    )
    if topic_ids is not None:
        sets = sets.filter(topic_id__in=topic_ids)
    offered: dict[str, OfferedBank] = defaultdict(lambda: OfferedBank(name=""))
    for nugget_set in sets:
        bank = offered[nugget_set.name]
        bank.name = nugget_set.name
        maker = maker_label(nugget_set)
        if maker not in bank.makers:
            bank.makers.append(maker)
        bank.sizes[nugget_set.topic_id] = nugget_set.size
    return list(offered.values())


def started_from_label(nugget_set: NuggetSet) -> str:
    """The set a post-edit started from, named with its maker and size ("" for a set made from scratch)."""
    drafts = nugget_set.drafts
    if drafts is None:
        return ""
    noun = "question" if drafts.form == NuggetSet.Form.QUESTIONS else "nugget"
    return f"{drafts.name} ({drafts.kind_label}; {maker_label(drafts)}; {_count(drafts.nuggets.count(), noun)})"
