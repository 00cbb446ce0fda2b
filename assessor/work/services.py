"""Services for an assessor's work on a topic: giving it, its active time, submit and reopen.

The kind-specific parts (which nugget set a piece of work edits, what submit
checks) live with the app that does the work; these functions keep the
shared record: who does what, its status, the time it took, and every
state change as a WorkEvent.
"""

from collections.abc import Sequence
from datetime import datetime

from django.contrib.auth.models import User
from django.db import IntegrityError, transaction
from django.db.models import F
from django.utils import timezone

from assessor.models import AssessorWork, CampaignMember, LabelSource, Topic, WorkEvent
from assessor.models.keys import published_id
from assessor.scoring.kept import scores_refresh_work
from assessor.sources import SourceRefused, source_claim
from assessor.work.access import assessor_work
from assessor.work.prepared import row_update
from assessor.work.roles import Role, user_role
from assessor.work.timing import active_increment, idle_limit_seconds


class WorkError(Exception):
    """A refused change to a piece of work; the message is meant for the person who asked."""

    def __init__(self, message: str):
        self.message = message
        super().__init__(message)


def topic_assessor(*, topic: Topic | str) -> User | None:
    """The one assessor who does a topic's human work, or None if nobody has any yet."""
    topic_id = topic.pk if isinstance(topic, Topic) else topic
    work = (
        AssessorWork.objects.filter(topic_id=topic_id, independent=False)
        .select_related("assessor")
        .order_by("created_at")
        .first()
    )
    return work.assessor if work else None


@transaction.atomic
def work_give(
    *,
    topic: Topic,
    assessor: User,
    kind: str,
    by: User | None,
    source: LabelSource,
    nugget_set_name: str = "",
    blind_to: Sequence[LabelSource] = (),
    items: Sequence = (),
) -> AssessorWork:
    """Give a topic's work of one kind to an assessor.

    A topic's human conditions are all done by one assessor (the protocol: the
    person who made the nuggets also assigns them), so a topic another
    assessor already works on is refused.

    Independent work (`blind_to` names the sources it must not have seen: a
    replicate's first condition, a study's two judges) stands beside the
    topic's own: it goes to someone who made none of those sources' labels on
    the topic, into a source of its own, restricted to `items` if given.
    """
    if user_role(assessor) != Role.ASSESSOR:
        raise WorkError(f"{assessor} is not an assessor: only assessors can be given topics.")
    # One give of a topic at a time: a second session giving it at the same moment waits here, then
    # finds the first one's work and is told so (PostgreSQL; SQLite writes one transaction at a time anyway).
    Topic.objects.select_for_update().filter(pk=topic.pk).exists()
    if blind_to:
        _independence_check(topic=topic, assessor=assessor, blind_to=blind_to)
        existing = AssessorWork.objects.filter(topic=topic, kind=kind, source=source).first()
    else:
        current = topic_assessor(topic=topic)
        if current is not None and current.pk != assessor.pk:
            raise WorkError(
                f"Topic {topic.published_id} is already given to {current}: a topic's human work is done by one assessor."
            )
        existing = AssessorWork.objects.filter(topic=topic, kind=kind, independent=False).first()
    if existing is not None:
        raise _already_given(existing)
    try:
        with transaction.atomic():
            work = AssessorWork.objects.create(
                topic=topic,
                assessor=assessor,
                kind=kind,
                nugget_set_name=nugget_set_name,
                source=source,
                created_by=by,
                independent=bool(blind_to),
                items=list(items),
            )
    except IntegrityError:  # given meanwhile by a writer that did not take the topic's lock
        raise _already_given(AssessorWork.objects.get(topic=topic, kind=kind, source=source)) from None
    detail: dict[str, object] = {"assessor": assessor.get_username(), "kind": kind}
    if blind_to:
        detail["blind_to"] = [s.name for s in blind_to]
    WorkEvent.objects.create(work=work, user=by, action="given", detail=detail)
    # Given a campaign's work, the assessor is one of its people: its pages under /c/<slug>/ are open to them.
    CampaignMember.objects.get_or_create(campaign_id=topic.campaign_id, user=assessor)
    return work


def _already_given(existing: AssessorWork) -> WorkError:
    return WorkError(f"Topic {published_id(existing.topic_id)} already has {existing.kind_label} work (given to {existing.assessor}).")


def _independence_check(*, topic: Topic, assessor: User, blind_to: Sequence[LabelSource]) -> None:
    """Refuse independent work to a person who made labels of a source it must be blind to, on this topic."""
    made = (
        AssessorWork.objects.filter(topic=topic, assessor=assessor, source__in=list(blind_to))
        .values_list("source__name", flat=True)
        .first()
    )
    if made is not None:
        raise WorkError(
            f"{assessor} made the {made!r} labels of topic {topic.pk}: independent judging needs someone else."
        )


def replicate_source_claim(
    *, family: str, name: str, of: LabelSource, by: User | None, imported_people: bool = False
) -> LabelSource:
    """The people's source of a second assessor's replicate of `of`: a people's source of the same family, or
    an imported file's when the caller found its labels made by people (`imported_people`: NIST's judgments)."""
    if not (of.is_human or (imported_people and of.kind == LabelSource.Kind.FILE)):
        raise WorkError(f"{of.name!r} is not people's work: only a human condition has a second assessor.")
    if name == of.name:
        raise WorkError(f"A replicate needs a name of its own, not {of.name!r}.")
    source = person_source_claim(family=family, name=name, by=by)
    if source.replicate_of_id is None:
        if AssessorWork.objects.filter(source=source).exists():
            raise WorkError(f"{name!r} holds the labels of other work: choose another name for the replicate.")
        source.replicate_of = of
        source.save(update_fields=["replicate_of"])
    elif source.replicate_of_id != of.pk:
        first = LabelSource.objects.get(pk=source.replicate_of_id).name
        raise WorkError(f"{name!r} is a replicate of {first!r}: choose another name.")
    return source


def person_source_claim(*, family: str, name: str, by: User | None) -> LabelSource:
    """The people's source a piece of work writes into; refused where an LLM or a file owns the name."""
    try:
        return source_claim(family=family, name=name, kind=LabelSource.Kind.PERSON, user=by)
    except SourceRefused as exc:
        raise WorkError(exc.message) from None


def work_activity_record(*, work: AssessorWork, now: datetime | None = None) -> float:
    """Credit the active time since the assessor's previous action; return the seconds added.

    Call inside a transaction with `work` locked (select_for_update): two tabs
    beating at once must not both credit the same gap. Submitted work earns no
    time: the list is frozen, reading it is not working on it.
    """
    now = now or timezone.now()
    if work.status == AssessorWork.Status.SUBMITTED:
        return 0.0
    added = active_increment(last_activity_at=work.last_activity_at, now=now, idle_limit_seconds=idle_limit_seconds())
    work.active_seconds += added
    work.last_activity_at = now
    fields = ["active_seconds", "last_activity_at"]
    if work.status == AssessorWork.Status.NOT_STARTED:
        work.status = AssessorWork.Status.IN_PROGRESS
        fields.append("status")
    # One UPDATE written without the ORM's query building: every label save makes it.
    row_update(work, fields)
    return added


@transaction.atomic
def work_heartbeat(
    *, work_id: int, user: User, kinds: Sequence[str], now: datetime | None = None
) -> AssessorWork:
    """The browser's sign of life while the assessor reads or types without saving a change.

    The work is checked (the assessor's own, of one of `kinds`) before any time is credited.
    """
    work = assessor_work(work_id=work_id, user=user, kinds=kinds, lock=True)
    work_activity_record(work=work, now=now)
    return work


def work_submit_mark(*, work: AssessorWork, user: User, detail: dict | None = None) -> None:
    """Record a submit (the caller has checked the work itself and holds the row locked)."""
    if work.status == AssessorWork.Status.SUBMITTED:
        raise WorkError("This work is already submitted.")
    work.status = AssessorWork.Status.SUBMITTED
    work.submitted_at = timezone.now()
    work.version = F("version") + 1
    work.redo = {}
    work.save(update_fields=["status", "submitted_at", "version", "redo"])
    work.refresh_from_db(fields=["version"])
    WorkEvent.objects.create(
        work=work, user=user, action="submitted", detail={"active_seconds": work.active_seconds, **(detail or {})}
    )
    # Its labels count from now on.
    scores_refresh_work(work)


def work_reopen_mark(*, work: AssessorWork, by: User | None, reason: str = "", redo: dict | None = None) -> None:
    """Record a reopening (by an organizer, or by a change of the work's inputs); the assessor may edit again.

    `redo` reopens it for some items only (AssessorWork.redo says which, and why).
    """
    if work.status != AssessorWork.Status.SUBMITTED:
        raise WorkError("Only submitted work can be reopened.")
    WorkEvent.objects.create(
        work=work,
        user=by,
        action="reopened",
        detail={
            "reason": reason,
            "submitted_at": work.submitted_at.isoformat() if work.submitted_at else None,
            **({"redo": redo} if redo else {}),
        },
    )
    work.redo = redo or {}
    work.status = AssessorWork.Status.IN_PROGRESS
    work.submitted_at = None
    work.reopened_count += 1
    work.version = F("version") + 1
    # The time between submit and reopening is not work on the topic.
    work.last_activity_at = None
    work.save(update_fields=["status", "submitted_at", "reopened_count", "version", "last_activity_at", "redo"])
    work.refresh_from_db(fields=["version"])
    # Its labels stop counting until it is submitted again.
    scores_refresh_work(work)


def work_notes_set(*, work_id: int, notes: str, by: User | None) -> AssessorWork:
    """Set the organizers' notes of a work; the version stays, so that an open page's saves still count."""
    work = AssessorWork.objects.get(pk=work_id)
    work.notes = notes.strip()
    work.save(update_fields=["notes"])
    WorkEvent.objects.create(work=work, user=by, action="notes", detail={"notes": work.notes})
    return work
