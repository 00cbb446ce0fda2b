"""The label-app kit: the pages every app of people's labels has, written once and configured per app.

An app of human labels describes its judging once (`LabelApp`: its kinds, its item page and template,
its label choices, the fields a save posts beside the common ones, its page, save and submit services,
and its organizer's pages as a `WorkOrganizing`) and takes its URLs from `LabelApp.urls()`: the
assessor's start, item, label and submit pages, then the organizer's giving, one-work and reopen pages.
What differs between apps (what an item is, what a label means, what a page shows) stays in the app's
judging module and its item template; how a page is found, refused, saved and submitted is the same for
every kind, here.

Its organizers' helpers (`WorkProgress`, `progress_rows`, `labels_counted_by_work`) build the progress
table every organizer's page shows; `templates/work/assessor_totals.html` is its per-assessor table.
"""

from collections import defaultdict
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from django.contrib import messages
from django.db.models import Count, Model, Q, Sum
from django.http import Http404, HttpResponse
from django.shortcuts import redirect, render
from django.urls import URLPattern, path, reverse
from django.views.decorators.http import require_GET, require_POST

from assessor.http import AuthenticatedRequest
from assessor.models import AssessorWork
from assessor.work.access import assessor_work
from assessor.work.organizing import WorkOrganizing, organizer_views
from assessor.work.pages import expected_version, int_param, label_fields, label_response, submit_response
from assessor.work.queue import next_work
from assessor.work.roles import assessor_required
from assessor.work.timing import duration_label

# (value, key, name, tone), as the judging frame shows them: the value posted, the keyboard key, the name
# read, and the tone that colours the choice the same on every page ("yes", "part", "no").
LabelChoice = tuple[str, str, str, str]


@dataclass(frozen=True)
class Posted:
    """A field a label save posts beside the common ones (`label_fields`), and the save's parameter it fills."""

    field: str
    param: str
    default: int | None = 0  # a whole number, this when absent or not a number; None: the posted text as it is

    def read(self, request: AuthenticatedRequest) -> Any:
        if self.default is None:
            return request.POST.get(self.field, "")
        value = int_param(request, self.field)
        return self.default if value is None else value


@dataclass(frozen=True)
class LabelApp:
    namespace: str  # the app's URL namespace ("grades"): its pages are named `<namespace>:<page>`
    item: str  # what one page judges, its URL name and path word: "report" (work/<id>/report/<n>/)
    template: str  # the item page
    label_choices: Sequence[LabelChoice]
    page_load: Callable[..., Any]  # page_load(work=, number=): the page, None (or Http404) when there is none
    save: Callable[..., Any]  # save(work_id=, user=, number=, **label_fields, **posted): the label or a replay
    submit: Callable[..., Any]  # submit(work_id=, user=, expected_version=)
    organizing: WorkOrganizing
    empty: str  # what the start page says of a topic with nothing to judge: "has no report to grade yet"
    posted: tuple[Posted, ...] = ()
    numbered: bool = True  # the save is told the page's number (False: the posted fields name the item)
    prefix: str = "work"  # the path word of the assessor's pages: work/<id>/
    start_name: str = "judge"  # the URL name of the start page, the queue's link
    has_items: Callable[[AssessorWork], bool] | None = None  # asked before the first page, where page_load 404s
    context: Callable[[AssessorWork], dict[str, Any]] = field(default=lambda work: {})  # more of the item page's

    def work(self, request: AuthenticatedRequest, work_id: int) -> AssessorWork:
        """The assessor's own work of the app's kinds (its organizing's); anyone else's is a 404, its existence not
        revealed."""
        return assessor_work(work_id=work_id, user=request.user, kinds=list(self.organizing.kinds))

    def start(self, request: AuthenticatedRequest, work_id: int) -> HttpResponse:
        """The first item with a label missing."""
        work = self.work(request, work_id)
        page = None if self.has_items is not None and not self.has_items(work) else self.page_load(work=work)
        if page is None:
            messages.info(request, f"Topic {work.topic} {self.empty}.")
            return redirect("home")
        return redirect(f"{self.namespace}:{self.item}", work_id=work.pk, number=page.number)

    def page(self, request: AuthenticatedRequest, work_id: int, number: int) -> HttpResponse:
        work = self.work(request, work_id)
        page = self.page_load(work=work, number=number)
        if page is None:
            raise Http404(f"No such {self.item}.")
        first = reverse(f"{self.namespace}:{self.item}", args=[work.pk, 1])
        context = {
            "page": page,
            "work": work,
            "base_url": first.removesuffix("1/"),  # the frame's links add an item's number and a slash
            "label_url": reverse(f"{self.namespace}:label", args=[work.pk, page.number]),
            "submit_url": reverse(f"{self.namespace}:submit", args=[work.pk]),
            "topic": work.topic,
            "time_label": duration_label(work.active_seconds),
            "label_choices": self.label_choices,
            "next_work": next_work(user=request.user, after=work) if page.frozen else None,
            **self.context(work),
        }
        return render(request, self.template, context)

    def label(self, request: AuthenticatedRequest, work_id: int, number: int) -> HttpResponse:
        item = {posted.param: posted.read(request) for posted in self.posted}
        if self.numbered:
            item["number"] = number
        return label_response(
            request,
            work_id=work_id,
            save=lambda: self.save(work_id=work_id, user=request.user, **item, **label_fields(request)),
            back=reverse(f"{self.namespace}:{self.item}", args=[work_id, number]),
        )

    def submit_page(self, request: AuthenticatedRequest, work_id: int) -> HttpResponse:
        return submit_response(
            request,
            submit=lambda: self.submit(work_id=work_id, user=request.user, expected_version=expected_version(request)),
            back=reverse(f"{self.namespace}:{self.start_name}", args=[work_id]),
        )

    def urls(self) -> list[URLPattern]:
        """The app's seven judging pages, each behind its role and method."""
        organize, organize_work, reopen = organizer_views(self.organizing)
        start = require_GET(assessor_required(self.start))
        page = require_GET(assessor_required(self.page))
        label = require_POST(assessor_required(self.label))
        submit = require_POST(assessor_required(self.submit_page))
        item = f"{self.prefix}/<int:work_id>/{self.item}/<int:number>/"
        return [
            path(f"{self.prefix}/<int:work_id>/", start, name=self.start_name),
            path(item, page, name=self.item),
            path(f"{item}label/", label, name="label"),
            path(f"{self.prefix}/<int:work_id>/submit/", submit, name="submit"),
            path("organize/", organize, name="organize"),
            path("organize/work/<int:work_id>/", organize_work, name="organize_work"),
            path("organize/work/<int:work_id>/reopen/", reopen, name="reopen"),
        ]


# --- The organizer's progress table ------------------------------------------------------------


@dataclass
class WorkProgress:
    """A row of the organizer's table: one work, its labels given of those it asks and the time in them."""

    work: AssessorWork
    total: int
    done: int
    seconds: float
    time_label: str = ""


def labels_counted_by_work(
    model: type[Model], works: Sequence[AssessorWork], *, given: Q | None = None
) -> dict[int, int]:
    """work id -> the number of the works' labels in `model` (those `given` keeps: a label left empty is none)."""
    rows = model._default_manager.filter(work__in=works)
    if given is not None:
        rows = rows.filter(given)
    return dict(rows.values("work_id").annotate(n=Count("id")).values_list("work_id", "n"))


def progress_rows(
    *,
    kinds: Sequence[str],
    progress: Callable[[Sequence[AssessorWork]], dict[int, tuple[int, int]]],
    models: Sequence[type[Model]],
) -> list[WorkProgress]:
    """Every work of the kinds with its (done, total) from the app's `WorkPage.progress` and the seconds its
    labels in `models` were credited."""
    works = list(AssessorWork.objects.filter(kind__in=kinds).select_related("assessor", "topic", "source"))
    counts = progress(works)
    seconds: defaultdict[int, float] = defaultdict(float)
    for model in models:
        for work_id, spent in (
            model._default_manager.filter(work__in=works)
            .values("work_id")
            .annotate(s=Sum("seconds_spent"))
            .values_list("work_id", "s")
        ):
            seconds[work_id] += spent or 0.0
    return [WorkProgress(work, counts[work.pk][1], counts[work.pk][0], seconds.get(work.pk) or 0.0) for work in works]


def time_or_dash(row: Any) -> None:
    """A detail row's time as the organizer's pages show it: none spent is a dash."""
    row.time_label = duration_label(row.seconds) if row.seconds else "—"
