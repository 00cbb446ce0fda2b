"""Reads of the nugget workspace and the organizer's pages, each a fixed number of queries."""

from dataclasses import dataclass, field

from django.contrib.auth.models import User
from django.db.models import Count, IntegerField, OuterRef, Prefetch, QuerySet, Subquery
from django.db.models.functions import Coalesce
from django.http import Http404

from assessor.models import AssessorWork, Qrel, Topic, WorkEvent
from assessor.registry import registry
from assessor.work.access import assessor_work
from assessor.work.timing import duration_label
from nuggets import workspace as rules
from nuggets.bankediting import topic_documents
from nuggets.giving import NIST_SOURCE, nugget_cap, submit_cap
from nuggets.kinds import NUGGET_KINDS, WORKSPACE_KINDS
from nuggets.lifecycle import nugget_sets_counted_q as nugget_sets_counted_q  # the apps read the rule here too
from nuggets.models import GoldAnswer, Nugget, NuggetEdit, NuggetSet

EDIT_LOG_LIMIT = 500


@dataclass
class NuggetRow:
    nugget: Nugget
    number: int
    # (1-based draft number, draft text) of the drafts it came from
    drafts: list[tuple[int, str]]
    # A bank's question: its gold answers, in order.
    answers: list[GoldAnswer] = field(default_factory=list)

    @property
    def words(self) -> int:
        return len(self.nugget.text.split())

    @property
    def too_long(self) -> bool:
        return self.words > rules.MAX_WORDS


@dataclass
class DraftRow:
    number: int
    text: str
    # 1-based numbers of the final nuggets that came from this draft; empty: deleted
    became: list[int]


@dataclass
class Panel:
    """The part of the workspace that changes with every operation."""

    work: AssessorWork
    nugget_set: NuggetSet
    rows: list[NuggetRow]
    drafts: list[DraftRow]
    summary: rules.LineageSummary | None
    cap: int
    submit_cap: int
    focus_id: int | None = None
    # A bank's: the topic's documents an answer's are picked from, (doc id, snippet).
    documents: list[tuple[str, str]] = field(default_factory=list)

    @property
    def is_bank(self) -> bool:
        return self.nugget_set.form == NuggetSet.Form.QUESTIONS

    @property
    def unit(self) -> str:
        return "questions" if self.is_bank else "nuggets"

    @property
    def over_submit_cap(self) -> int:
        return max(0, len(self.rows) - self.submit_cap)

    @property
    def is_post_edit(self) -> bool:
        return self.nugget_set.kind == NuggetSet.Kind.AUTO_EDIT

    @property
    def frozen(self) -> bool:
        return self.nugget_set.status == NuggetSet.Status.SUBMITTED

    @property
    def at_cap(self) -> bool:
        return len(self.rows) >= self.cap

    @property
    def missing_importance(self) -> int:
        return sum(1 for row in self.rows if not row.nugget.importance)

    @property
    def time_label(self) -> str:
        return duration_label(self.work.active_seconds)


@dataclass
class SegmentRow:
    docid: str
    grade: int
    text: str
    title: str
    # 1-based numbers of the nuggets marked as coming from this segment
    nuggets: list[int] = field(default_factory=list)


def work_for_assessor(*, work_id: int, user: User) -> AssessorWork:
    """The assessor's own nugget work; anyone else's is a 404, so its existence is not even revealed."""
    return assessor_work(work_id=work_id, user=user, kinds=WORKSPACE_KINDS)


def work_nugget_set(*, work: AssessorWork) -> NuggetSet:
    try:
        return NuggetSet.objects.get(topic_id=work.topic_id, name=work.nugget_set_name)
    except NuggetSet.DoesNotExist:
        raise Http404("This work has no nugget set.") from None


def panel_load(*, work: AssessorWork, nugget_set: NuggetSet | None = None, focus_id: int | None = None) -> Panel:
    nugget_set = nugget_set or work_nugget_set(work=work)
    nuggets = list(
        nugget_set.nuggets.order_by("position", "id").prefetch_related(
            Prefetch("derived_from", queryset=Nugget.objects.only("id", "position", "text", "nugget_set_id")),
            *(["gold_answers"] if nugget_set.form == NuggetSet.Form.QUESTIONS else []),
        )
    )
    drafts = []
    if nugget_set.drafts_id:
        drafts_query = Nugget.objects.filter(nugget_set_id=nugget_set.drafts_id).order_by("position", "id")
        drafts = list(drafts_query.only("id", "text", "position"))
    draft_number = {draft.pk: index + 1 for index, draft in enumerate(drafts)}
    rows = []
    finals = []
    for index, nugget in enumerate(nuggets):
        sources = sorted(nugget.derived_from.all(), key=lambda d: draft_number.get(d.pk, 0))
        numbered = [(draft_number.get(d.pk, 0), d.text) for d in sources]
        answers = list(nugget.gold_answers.all()) if nugget_set.form == NuggetSet.Form.QUESTIONS else []
        rows.append(NuggetRow(nugget=nugget, number=index + 1, drafts=numbered, answers=answers))
        finals.append((index, nugget.origin, [d.pk for d in sources]))
    summary = None
    draft_rows: list[DraftRow] = []
    if nugget_set.drafts_id:
        summary = rules.lineage_summarize(draft_ids=[d.pk for d in drafts], finals=finals)
        draft_rows = [
            DraftRow(number=index + 1, text=draft.text, became=[p + 1 for p in summary.descendants[draft.pk]])
            for index, draft in enumerate(drafts)
        ]
    return Panel(
        work=work,
        nugget_set=nugget_set,
        rows=rows,
        drafts=draft_rows,
        summary=summary,
        cap=nugget_cap(nugget_set.kind),
        submit_cap=submit_cap(nugget_set.kind),
        focus_id=focus_id,
        documents=topic_documents(work.topic_id) if nugget_set.form == NuggetSet.Form.QUESTIONS else [],
    )


def relevant_segments(*, topic_id: str, panel: Panel | None = None) -> list[SegmentRow]:
    """The segments NIST judged relevant (grade >= 1), best grade first: what the assessor reads."""
    qrels = (
        Qrel.objects.filter(topic_id=topic_id, source__name=NIST_SOURCE, grade__gte=Qrel.RELEVANT_MIN_GRADE)
        .select_related("segment")
        .order_by("-grade", "segment_id")
    )
    rows = [SegmentRow(docid=q.segment_id, grade=q.grade, text=q.segment.text, title=q.segment.title) for q in qrels]
    if panel is not None:
        by_docid = {row.docid: row for row in rows}
        for nugget_row in panel.rows:
            source = nugget_row.nugget.source_segment_id
            if source in by_docid:
                by_docid[source].nuggets.append(nugget_row.number)
    return rows


def _nugget_count_subquery() -> Coalesce:
    counts = (
        Nugget.objects.filter(nugget_set__topic_id=OuterRef("topic_id"), nugget_set__name=OuterRef("nugget_set_name"))
        .order_by()
        .values("nugget_set")
        .annotate(n=Count("id"))
        .values("n")
    )
    return Coalesce(Subquery(counts, output_field=IntegerField()), 0)


def nugget_works(*, assessor: User | None = None, topic_id: str | None = None) -> QuerySet[AssessorWork]:
    works = AssessorWork.objects.filter(kind__in=WORKSPACE_KINDS).select_related("topic", "assessor")
    if assessor is not None:
        works = works.filter(assessor=assessor)
    if topic_id is not None:
        works = works.filter(topic_id=topic_id)
    return works.annotate(nugget_count=_nugget_count_subquery()).order_by("topic_id", "kind")


def condition_averages() -> list[tuple[str, int, str, float]]:
    """(condition, submitted topics, mean active time label, mean seconds) over submitted work: the study's figure."""
    rows = AssessorWork.objects.filter(kind__in=NUGGET_KINDS, status=AssessorWork.Status.SUBMITTED).values_list(
        "kind", "active_seconds"
    )
    averages = rules.condition_average_seconds(rows)
    return [(registry.work_label(kind), count, duration_label(mean), mean) for kind, (count, mean) in averages.items()]


def lineage_totals() -> dict[str, rules.LineageSummary]:
    """Per post-edited set name: the lineage summaries of all its topics added up (three queries)."""
    sets = {
        pk: (name, drafts_id)
        for pk, name, drafts_id in NuggetSet.objects.filter(
            kind=NuggetSet.Kind.AUTO_EDIT, drafts__isnull=False, form=NuggetSet.Form.FACTS
        ).values_list("pk", "name", "drafts_id")
    }
    drafts_of: dict[int, list[int]] = {}
    finals_of: dict[int, dict[int, tuple[int, str, list[int]]]] = {pk: {} for pk in sets}
    draft_set_ids = {drafts_id for _, drafts_id in sets.values()}
    draft_rows = Nugget.objects.filter(nugget_set_id__in=draft_set_ids).order_by("position", "id")
    for pk, set_id in draft_rows.values_list("pk", "nugget_set_id"):
        drafts_of.setdefault(set_id, []).append(pk)
    for pk, set_id, position, origin in Nugget.objects.filter(nugget_set_id__in=list(sets)).values_list(
        "pk", "nugget_set_id", "position", "origin"
    ):
        finals_of[set_id][pk] = (position, origin, [])
    links = Nugget.derived_from.through.objects.filter(from_nugget__nugget_set_id__in=list(sets)).values_list(
        "from_nugget_id", "to_nugget_id", "from_nugget__nugget_set_id"
    )
    for nugget_id, draft_id, set_id in links:
        finals_of[set_id][nugget_id][2].append(draft_id)
    totals: dict[str, rules.LineageSummary] = {}
    for pk, (name, drafts_id) in sets.items():
        one = rules.lineage_summarize(draft_ids=drafts_of.get(drafts_id, []), finals=list(finals_of[pk].values()))
        total = totals.setdefault(name, rules.LineageSummary())
        for counter in ("drafts", "kept", "reworded", "merged", "split", "deleted", "added", "final"):
            setattr(total, counter, getattr(total, counter) + getattr(one, counter))
    return dict(sorted(totals.items()))


@dataclass
class WorkReport:
    work: AssessorWork
    panel: Panel
    edits: list[NuggetEdit]
    events: list[WorkEvent]
    edits_total: int
    # The edits with their descriptions, filled in by the organizer's page.
    log: list[tuple[NuggetEdit, str]] = field(default_factory=list)
    # The set a post-edit started from, named with its maker and size (nuggets.bankchoices), by the same page.
    started_from: str = ""


def topic_report(*, topic: Topic) -> list[WorkReport]:
    """Per nugget condition of a topic: its nuggets with lineage, edit log, events and time."""
    reports = []
    for work in nugget_works(topic_id=topic.pk):
        nugget_set = NuggetSet.objects.filter(topic_id=topic.pk, name=work.nugget_set_name).first()
        if nugget_set is None:
            continue
        edits = list(nugget_set.edits.select_related("user").order_by("-id")[:EDIT_LOG_LIMIT])
        reports.append(
            WorkReport(
                work=work,
                panel=panel_load(work=work, nugget_set=nugget_set),
                edits=edits,
                events=list(work.events.select_related("user").order_by("at", "id")),
                edits_total=nugget_set.edits.count(),
            )
        )
    return reports


def edit_describe(edit: NuggetEdit) -> str:
    """One line for the log: what the operation did, in words."""
    before = {s["id"]: s for s in edit.before.get("nuggets", [])} if isinstance(edit.before, dict) else {}
    after = edit.after.get("nuggets", []) if isinstance(edit.after, dict) else []
    if edit.operation in ("submit", "reopen"):
        reason = edit.after.get("reason") if isinstance(edit.after, dict) else ""
        return f"{edit.operation}{': ' + reason if reason else ''}"
    if edit.operation == "undo":
        return f"undo of {edit.after.get('undone_operation', 'an edit')}"
    parts = []
    for snap in after:
        old = before.get(snap["id"])
        if old is None:
            parts.append(f"+ “{snap['text']}”{' (' + snap['importance'] + ')' if snap['importance'] else ''}")
        elif old["text"] != snap["text"]:
            parts.append(f"“{old['text']}” → “{snap['text']}”")
        elif old["importance"] != snap["importance"]:
            parts.append(f"“{snap['text']}”: {old['importance'] or 'none'} → {snap['importance'] or 'none'}")
        elif old["source_segment"] != snap["source_segment"]:
            parts.append(f"“{snap['text']}” source {snap['source_segment'] or 'none'}")
        elif old.get("rule", "") != snap.get("rule", "") and old.get("answers") == snap.get("answers"):
            parts.append(
                f"“{snap['text']}”: rule {(old['rule'] or 'none').upper()} → {(snap['rule'] or 'none').upper()}"
            )
        elif old.get("answers", []) != snap.get("answers", []):
            parts.append(f"“{snap['text']}”: {answers_describe(old['answers'], snap['answers'])}")
        elif old["position"] != snap["position"]:
            parts.append(f"“{snap['text']}” moved {old['position'] + 1} → {snap['position'] + 1}")
    after_ids = {snap["id"] for snap in after}
    for nugget_id, old in before.items():
        if nugget_id not in after_ids:
            parts.append(f"− “{old['text']}”")
    return "; ".join(parts)


def answers_describe(before: list[dict], after: list[dict]) -> str:
    """A question's answer changes in words: answers added, removed, or given other documents."""
    old = {answer["text"]: answer["documents"] for answer in before}
    new = {answer["text"]: answer["documents"] for answer in after}
    parts = [
        f"answer + “{text}” ({', '.join(docs) or 'no documents'})" for text, docs in new.items() if text not in old
    ]
    parts += [f"answer − “{text}”" for text in old if text not in new]
    parts += [
        f"answer “{text}” documents {', '.join(old[text]) or 'none'} → {', '.join(docs) or 'none'}"
        for text, docs in new.items()
        if text in old and old[text] != docs
    ]
    return "; ".join(parts) or "answers reordered"


def topic_nugget_sets(*, topic: Topic, form: str = NuggetSet.Form.FACTS, answers: bool = False) -> list[NuggetSet]:
    """The topic's nugget sets (or, with `form="questions"`, its banks) with their nuggets, for its page."""
    prefetch = ["nuggets__gold_answers"] if answers else ["nuggets"]
    return list(
        NuggetSet.objects.filter(topic=topic, form=form)
        .select_related("created_by", "imported_from")
        .prefetch_related(*prefetch)
        .order_by("name")
    )
