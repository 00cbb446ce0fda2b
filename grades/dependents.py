"""Grades as dependents of question banks (nuggets.dependents).

When a bank changes after its reports were graded: the grades of removed or reworded questions are retired
(RetiredGradeLabel keeps them, scores no longer see them); each submitted grading work on the bank is reopened
(its page asks for every grade missing, the changed questions' among them); an LLM source that graded the bank
is marked stale for the changed questions (`LabelSource.stale`, as the first family's LLM assigners are) until a
re-run grades them (grades.llm.grades_rerun_create), and its notes say so wherever its scores show.
"""

from collections.abc import Mapping, Sequence

from django.contrib.auth.models import User
from django.db import transaction
from django.db.models import Count

from assessor.models import AssessorWork, LabelSource
from assessor.scoring.kept import scores_refresh
from assessor.work.services import work_reopen_mark
from grades.kinds import GRADE_WORK
from grades.models import GradeLabel, RetiredGradeLabel
from grades.scoring import SCORE_FAMILY
from nuggets.dependents import Change, Dependent
from nuggets.models import Nugget, NuggetSet

# A grade given for the old wording of a question no longer grades it.
RETIRED_CHANGES = (Change.REWORDED,)


def grades_describe(nugget_ids: Sequence[int]) -> list[Dependent]:
    rows = (
        GradeLabel.objects.filter(nugget_id__in=nugget_ids)
        .values("source__name", "source__kind")
        .annotate(n=Count("id"))
        .order_by("source__name")
    )
    return [
        Dependent(
            source=f"grade source {row['source__name']!r} ({LabelSource.Kind(row['source__kind']).label})",
            labels=row["n"],
            kind=row["source__kind"],
        )
        for row in rows
    ]


def grades_retire(nugget_ids: Sequence[int], reason: str, texts: Mapping[int, str] | None = None) -> int:
    """Move the grades of these questions to the record of retired grades (with the question's text they were
    given for: `texts`, where it has changed since)."""
    grades = list(
        GradeLabel.objects.filter(nugget_id__in=nugget_ids).select_related("nugget", "created_by", "imported_from")
    )
    RetiredGradeLabel.objects.bulk_create(
        RetiredGradeLabel(
            answer_id=grade.answer_id,
            nugget_id=grade.nugget_id,
            nugget_text=(texts or {}).get(grade.nugget_id, grade.nugget.text),
            nugget_set_id=grade.nugget.nugget_set_id,
            source_id=grade.source_id,
            label=grade.label,
            confidence=grade.confidence,
            reasoning=grade.reasoning,
            document=grade.document,
            document_grade=grade.document_grade,
            made_by=grade.made_by,
            made_at=grade.created_at,
            work_id=grade.work_id,
            seconds_spent=grade.seconds_spent,
            reason=reason,
        )
        for grade in grades
    )
    GradeLabel.objects.filter(pk__in=[grade.pk for grade in grades]).delete()
    scores_refresh(family=SCORE_FAMILY, topics={grade.topic_id for grade in grades})
    return len(grades)


def bank_changed(
    nugget_set: NuggetSet, changes: Mapping[int, str], by: User | None, before: Mapping[int, str], reason: str
) -> list[str]:
    """Retire what no longer holds, reopen the people's grading and mark the LLM sources stale, for the changed
    questions."""
    done: list[str] = []
    retired = grades_retire([n for n, why in changes.items() if why in RETIRED_CHANGES], Change.REWORDED, before)
    if retired:
        done.append(f"{retired} grade(s) of reworded questions retired")
    regrade = [nugget_id for nugget_id, why in changes.items() if why != Change.REMOVED]
    if not regrade:
        return done
    why = f"The question bank changed: {len(regrade)} question(s) to grade."
    if reason:
        why += f" The organizer reopened it: {reason.rstrip('.')}."
    works = AssessorWork.objects.select_for_update().filter(
        kind=GRADE_WORK, topic_id=nugget_set.topic_id, nugget_set_name=nugget_set.name
    )
    for work in works:
        if work.status == AssessorWork.Status.SUBMITTED:
            work_reopen_mark(work=work, by=by, reason=why)
            done.append(f"the grading of {work.assessor} reopened for {len(regrade)} question(s)")
    graded_by = set(GradeLabel.objects.filter(nugget__nugget_set=nugget_set).values_list("source_id", flat=True))
    graded_by |= set(RetiredGradeLabel.objects.filter(nugget_set=nugget_set).values_list("source_id", flat=True))
    sources = LabelSource.objects.select_for_update().filter(pk__in=graded_by, kind=LabelSource.Kind.LLM)
    for source in sources.order_by("name"):
        topics = source.stale.setdefault(nugget_set.name, {})
        topics[nugget_set.topic_id] = sorted(set(topics.get(nugget_set.topic_id, [])) | set(regrade))
        source.save(update_fields=["stale"])
        done.append(
            f"the LLM grades {source.name!r} are stale on {len(regrade)} question(s) until they are graded again"
        )
    return done


def stale_reports(source: LabelSource, bank: str, topic_id: str) -> list[tuple[str, int]]:
    """(run id, report) of each report of the topic the source graded on the bank, before or since it changed:
    the reports a re-run grades the changed questions of."""
    graded = GradeLabel.objects.filter(source=source, topic_id=topic_id, nugget__nugget_set__name=bank)
    retired = RetiredGradeLabel.objects.filter(source=source, answer__topic_id=topic_id, nugget_set__name=bank)
    rows = set(graded.values_list("answer__run__run_id", "answer_id"))
    rows |= set(retired.values_list("answer__run__run_id", "answer_id"))
    return sorted(rows)


def stale_questions(source: LabelSource, bank: str, topic_id: str) -> list[int]:
    """The questions the source is stale on in the topic's bank that the bank still holds (a question removed
    since needs no grade), in the bank's order."""
    wanted = source.stale.get(bank, {}).get(topic_id, [])
    present = Nugget.objects.filter(pk__in=wanted, nugget_set__name=bank, nugget_set__topic_id=topic_id)
    return list(present.order_by("position", "pk").values_list("pk", flat=True))


@transaction.atomic
def stale_settle(source: LabelSource, bank: str, topic_id: str) -> bool:
    """Clear the source's stale mark on a topic's bank once every report it graded there has a grade of every
    changed question the bank still holds; True when it is cleared (or was not there)."""
    source = LabelSource.objects.select_for_update().get(pk=source.pk)
    topics = source.stale.get(bank, {})
    if topic_id not in topics:
        return True
    questions = stale_questions(source, bank, topic_id)
    graded = GradeLabel.objects.filter(source=source, topic_id=topic_id, nugget_id__in=questions).count()
    if graded < len(stale_reports(source, bank, topic_id)) * len(questions):
        return False
    del topics[topic_id]
    if not topics:
        del source.stale[bank]
    source.save(update_fields=["stale"])
    return True
