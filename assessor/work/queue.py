"""An assessor's queue of work: its order, what is left of each piece, and what comes next.

The order is the one rule both the queue page and a finished page's "next" link use:
open work before submitted work, then by topic, then by stage (a topic's nugget
list before the ManualAssign that labels against it, then support judging).
"""

from collections import defaultdict
from dataclasses import dataclass

from django.contrib.auth.models import User
from django.urls import NoReverseMatch, reverse

from assessor.models import AssessorWork
from assessor.registry import registry
from assessor.work.timing import duration_label


@dataclass
class QueueItem:
    work: AssessorWork
    url: str | None  # None: the kind's page is not installed
    done: int | None  # None: the kind does not count its progress
    total: int | None
    unit: str
    time_label: str
    waiting: str = ""  # why the work cannot be done yet (its kind's WorkPage.waiting); empty: it can

    @property
    def progress_label(self) -> str:
        """`5 / 277 pairs`, or empty when the kind does not count."""
        if self.done is None or self.total is None:
            return ""
        return f"{self.done} / {self.total} {self.unit}".strip()


def stage_of(kind: str) -> int:
    page = registry.work_page(kind)
    return page.stage if page else 99


def queue_key(work: AssessorWork) -> tuple[bool, str, int, str]:
    return (work.status == AssessorWork.Status.SUBMITTED, work.topic_id, stage_of(work.kind), work.kind)


def work_url(work: AssessorWork) -> str | None:
    page = registry.work_page(work.kind)
    if page is None:
        return None
    try:
        return reverse(page.url_name, args=[work.pk])
    except NoReverseMatch:
        return None


def queue_items(*, user: User) -> list[QueueItem]:
    """The user's work in queue order, each with its page, progress and time."""
    works = sorted(AssessorWork.objects.filter(assessor=user).select_related("topic"), key=queue_key)
    by_kind: dict[str, list[AssessorWork]] = defaultdict(list)
    for work in works:
        by_kind[work.kind].append(work)
    counts: dict[int, tuple[int, int]] = {}
    waiting: dict[int, str] = {}
    for kind, group in by_kind.items():
        page = registry.work_page(kind)
        if page and page.progress:
            counts.update(page.progress(group))
        if page and page.waiting:
            waiting.update(page.waiting([work for work in group if work.status != AssessorWork.Status.SUBMITTED]))
    items = []
    for work in works:
        page = registry.work_page(work.kind)
        done, total = counts.get(work.pk, (None, None))
        items.append(
            QueueItem(
                work=work,
                url=work_url(work),
                done=done,
                total=total,
                unit=page.unit if page else "",
                time_label=duration_label(work.active_seconds),
                waiting=waiting.get(work.pk, ""),
            )
        )
    return items


def next_work(*, user: User, after: AssessorWork) -> QueueItem | None:
    """The first open work in the user's queue other than `after`, with a page to go to."""
    for item in queue_items(user=user):
        if item.work.pk != after.pk and item.work.status != AssessorWork.Status.SUBMITTED and item.url:
            return item
    return None
