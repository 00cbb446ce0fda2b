"""Reads for support judging: the pairs of a topic, one answer's page, and the organizer's progress.

A pair is an answer sentence and its first cited segment. Sentences without a
citation are not judged (they count as NS in the scores); a pair whose
segment text the collection does not have is not shown to assessors (an empty
passage cannot be judged) but listed for the organizer.

Blinding: a page reads no label but those made in its own work (by the
label's `work`, never by a name); a post-editing page also reads the label
of each pair from the LLM source it was given (that is the condition) but
never the method's name, nor a run.
"""

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from django.db.models import Count, F, Q, Sum
from django.http import Http404

from assessor.models import AssessorWork, Citation, LabelSource, Sentence
from assessor.work.judging import answer_token, position_choose, shuffled
from support.kinds import SUPPORT_POSTEDIT, SUPPORT_SCRATCH
from support.models import SupportLabel

SUPPORT_KINDS = (SUPPORT_SCRATCH, SUPPORT_POSTEDIT)
# The method name a work's labels are stored under, by the work's kind.
METHOD_OF_KIND: dict[str, str] = {
    SUPPORT_SCRATCH: SupportLabel.MethodKind.SCRATCH.value,
    SUPPORT_POSTEDIT: SupportLabel.MethodKind.POSTEDIT.value,
}
# The page's key of each label: ManualAssign's keys for the same meanings (s support, p partial, n no support).
LABEL_KEYS = {SupportLabel.Label.FS: "s", SupportLabel.Label.PS: "p", SupportLabel.Label.NS: "n"}
LABEL_SHORT: dict[int, str] = {SupportLabel.Label.FS: "FS", SupportLabel.Label.PS: "PS", SupportLabel.Label.NS: "NS"}


def method_of(work: AssessorWork) -> str:
    return METHOD_OF_KIND[work.kind]


def llm_method_of(work: AssessorWork) -> str:
    """Post-editing: the automatic method whose labels are shown (kept in the work's name field)."""
    return work.nugget_set_name if work.kind == SUPPORT_POSTEDIT else ""


def _pair_rows(*, topic_id: str):
    return Citation.objects.filter(sentence__answer__topic_id=topic_id, position=0)


def judgeable_pairs(*, topic_id: str) -> list[tuple[int, int]]:
    """(answer id, citation id) of every pair of the topic whose segment has text."""
    rows = _pair_rows(topic_id=topic_id).exclude(segment__text="").values_list("sentence__answer_id", "pk")
    return list(rows)


def missing_text_pairs(*, topic_ids: list[str] | None = None) -> list[Mapping[str, Any]]:
    """Pairs whose cited segment has no text, for the organizer (with the run: organizers may see it)."""
    rows = Citation.objects.filter(position=0, segment__text="")
    if topic_ids is not None:
        rows = rows.filter(sentence__answer__topic_id__in=topic_ids)
    return list(
        rows.order_by("sentence__answer__topic_id", "sentence__answer__run__run_id", "sentence__index").values(
            "sentence__answer__topic_id", "sentence__answer__run__run_id", "sentence__index", "segment_id"
        )
    )


@dataclass
class TopicPairs:
    order: list[int]  # answer ids with pairs, in the assessor's order
    pairs_of: dict[int, list[int]]  # answer id -> citation ids
    done: dict[int, int]  # citation id -> the assessor's label

    @property
    def total(self) -> int:
        return sum(len(c) for c in self.pairs_of.values())

    def done_counts(self) -> list[int]:
        return [sum(1 for c in self.pairs_of[a] if c in self.done) for a in self.order]

    def needed(self) -> list[int]:
        return [len(self.pairs_of[a]) for a in self.order]


def topic_pairs(*, work: AssessorWork) -> TopicPairs:
    pairs_of: dict[int, list[int]] = {}
    restricted = set(work.items)
    for answer_id, citation_id in judgeable_pairs(topic_id=work.topic_id):
        if not restricted or citation_id in restricted:
            pairs_of.setdefault(answer_id, []).append(citation_id)
    if restricted:
        # A work restricted to some pairs shows their answers in the order the pairs were given.
        answer_of = {citation_id: answer_id for answer_id, cited in pairs_of.items() for citation_id in cited}
        order = list(dict.fromkeys(answer_of[c] for c in work.items if c in answer_of))
    else:
        order = shuffled(list(pairs_of), assessor_id=work.assessor_id, topic_id=work.topic_id)
    # Only this work's own labels: never another method's, another person's or an import's, whatever its name.
    done = dict(SupportLabel.objects.filter(work=work, citation__position=0).values_list("citation_id", "label"))
    return TopicPairs(order=order, pairs_of=pairs_of, done=done)


@dataclass
class SentenceRow:
    sentence: Sentence
    citation: Citation | None  # the judged pair's first citation, if judged
    label: int | None  # the assessor's label
    shown: int | None  # post-editing: the LLM label shown and pre-selected
    # Why a sentence without a pair here is not judged: it cites nothing, its passage has no text, or this
    # work (a study's sample) leaves its pair out. "" for a sentence judged here.
    not_judged: str = ""

    @property
    def selected(self) -> int | None:
        return self.label if self.label is not None else self.shown


@dataclass
class SupportPage:
    work: AssessorWork
    number: int
    total_answers: int
    rows: list[SentenceRow]
    pairs_done: int
    pairs_total: int
    answers_done: int
    focus_index: int | None  # sentence index of the first unjudged pair
    next_incomplete: int | None
    frozen: bool
    postedit: bool
    token: str = ""
    done_counts: list[int] = field(default_factory=list)

    @property
    def pairs(self) -> list[SentenceRow]:
        return [row for row in self.rows if row.citation is not None]


def _why_not_judged(textless: bool | None) -> str:
    """`SentenceRow.not_judged` from the sentence's first citation: None when it cites nothing."""
    if textless is None:
        return "cites nothing: counts as no support"
    if textless:
        return "its cited passage has no text in the collection: not judged"
    return "its citation is outside the pairs of this work (a study's sample): judged elsewhere, not here"


def _llm_labels_shown(work: AssessorWork, judged: set[int]) -> dict[int, int]:
    """The LLM's labels a post-edit shows on the pairs it judges, by citation."""
    return dict(
        SupportLabel.objects.filter(
            method=llm_method_of(work), method_kind=SupportLabel.MethodKind.AUTO, citation_id__in=judged
        )
        .exclude(source__kind=LabelSource.Kind.PERSON)
        .values_list("citation_id", "label")
    )


def support_page_load(*, work: AssessorWork, number: int | None = None) -> SupportPage:
    pairs = topic_pairs(work=work)
    if not pairs.order:
        raise Http404("This topic has no cited sentences to judge.")
    done_counts, needed = pairs.done_counts(), pairs.needed()
    position = position_choose(done_counts=done_counts, needed=needed, number=number)
    if position is None:
        raise Http404("No such answer.")
    number = position.number
    answer_id = pairs.order[number - 1]
    judged = set(pairs.pairs_of[answer_id])
    sentences = list(Sentence.objects.filter(answer_id=answer_id).order_by("index").only("id", "index", "text"))
    citations = {
        c.sentence_id: c
        for c in Citation.objects.filter(pk__in=judged)
        .select_related("segment")
        .only("id", "sentence_id", "segment__docid", "segment__text", "segment__title")
    }
    postedit = work.kind == SUPPORT_POSTEDIT
    shown = _llm_labels_shown(work, judged) if postedit else {}
    # Each sentence's first citation, judged here or not, with whether its passage has text: why one is not.
    first_cited = dict(
        Citation.objects.filter(sentence__answer_id=answer_id, position=0)
        .annotate(textless=Q(segment__text=""))
        .values_list("sentence_id", "textless")
    )
    rows = []
    for sentence in sentences:
        citation = citations.get(sentence.pk)
        rows.append(
            SentenceRow(
                sentence=sentence,
                citation=citation,
                label=pairs.done.get(citation.pk) if citation else None,
                shown=shown.get(citation.pk) if citation else None,
                not_judged="" if citation else _why_not_judged(first_cited.get(sentence.pk)),
            )
        )
    focus = next((r.sentence.index for r in rows if r.citation is not None and r.label is None), None)
    return SupportPage(
        work=work,
        number=number,
        total_answers=len(pairs.order),
        rows=rows,
        pairs_done=sum(done_counts),
        pairs_total=pairs.total,
        answers_done=sum(1 for done, need in zip(done_counts, needed, strict=False) if done >= need),
        focus_index=focus,
        next_incomplete=position.next_incomplete,
        frozen=work.status == AssessorWork.Status.SUBMITTED,
        postedit=postedit,
        token=answer_token(answer_id),
        done_counts=done_counts,
    )


# --- The organizer's view ------------------------------------------------------------


@dataclass
class SupportProgress:
    work: AssessorWork
    pairs_total: int
    pairs_done: int
    seconds: float
    shown: int  # post-editing: labels that had an LLM label shown
    changed: int
    # Labels the organizer's page fills in for the template.
    time_label: str = ""
    per_pair_label: str = ""
    change_label: str = ""

    @property
    def seconds_per_pair(self) -> float | None:
        return self.seconds / self.pairs_done if self.pairs_done else None

    @property
    def change_rate(self) -> float | None:
        return self.changed / self.shown if self.shown else None

    @property
    def done(self) -> int:
        return self.pairs_done

    @property
    def total(self) -> int:
        return self.pairs_total


def support_progress(works: Sequence[AssessorWork] | None = None) -> list[SupportProgress]:
    """Every support work (or those given) with pairs done, seconds and change rate, in a fixed number of queries."""
    if works is None:
        works = list(AssessorWork.objects.filter(kind__in=SUPPORT_KINDS).select_related("assessor", "topic"))
    topic_ids = sorted({w.topic_id for w in works})
    totals = dict(
        Citation.objects.filter(position=0, sentence__answer__topic_id__in=topic_ids)
        .exclude(segment__text="")
        .values("sentence__answer__topic_id")
        .annotate(n=Count("id"))
        .values_list("sentence__answer__topic_id", "n")
    )
    stats = {
        row["work_id"]: row
        # The plugin takes the `changed` count for the model's property; these rows are values(), not models.
        for row in SupportLabel.objects.filter(work__in=works, citation__position=0)  # type: ignore[no-redef]
        .values("work_id")
        .annotate(
            n=Count("id"),
            s=Sum("seconds_spent"),
            shown=Count("id", filter=Q(shown_label__isnull=False)),
            changed=Count("id", filter=Q(shown_label__isnull=False) & ~Q(shown_label=F("label"))),
        )
    }
    result = []
    for work in works:
        row = stats.get(work.pk, {})
        result.append(
            SupportProgress(
                work=work,
                pairs_total=len(work.items) if work.items else totals.get(work.topic_id, 0),
                pairs_done=row.get("n", 0),
                seconds=row.get("s") or 0.0,
                shown=row.get("shown", 0),
                changed=row.get("changed", 0),
            )
        )
    return result


@dataclass
class PairTime:
    number: int  # the answer's position for the assessor
    run_id: str
    sentence_index: int
    label: int | None
    shown: int | None
    seconds: float | None
    # Labels the organizer's page fills in for the template.
    label_name: str = ""
    shown_name: str = ""
    time_label: str = ""

    @property
    def changed(self) -> bool | None:
        if self.shown is None or self.label is None:
            return None
        return self.shown != self.label


def support_work_detail(*, work: AssessorWork) -> list[PairTime]:
    """Each pair of a support work, in the assessor's order, with its label, the label shown and seconds."""
    pairs = topic_pairs(work=work)
    citation_ids = [c for a in pairs.order for c in pairs.pairs_of[a]]
    rows = {
        row["pk"]: row
        for row in Citation.objects.filter(pk__in=citation_ids).values(
            "pk", "sentence__index", "sentence__answer__run__run_id"
        )
    }
    labels = {
        row["citation_id"]: row
        for row in SupportLabel.objects.filter(work=work, citation_id__in=citation_ids).values(
            "citation_id", "label", "shown_label", "seconds_spent"
        )
    }
    result = []
    for number, answer_id in enumerate(pairs.order, start=1):
        for citation_id in sorted(pairs.pairs_of[answer_id], key=lambda c: rows[c]["sentence__index"]):
            label: Mapping[str, Any] = labels.get(citation_id, {})
            result.append(
                PairTime(
                    number=number,
                    run_id=rows[citation_id]["sentence__answer__run__run_id"],
                    sentence_index=rows[citation_id]["sentence__index"],
                    label=label.get("label"),
                    shown=label.get("shown_label"),
                    seconds=label.get("seconds_spent"),
                )
            )
    return result
