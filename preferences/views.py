"""The preference pages: an assessor's pair pages, and the organizer's giving and progress pages.

Everything the assessor's pages show comes from preferences.judging, which reads no LLM output and no run.
"""

from django import forms
from django.contrib import messages
from django.http import Http404, HttpResponse, StreamingHttpResponse
from django.shortcuts import redirect, render
from django.urls import reverse
from django.views.decorators.http import require_GET, require_POST

from assessor.collection.pages import leaderboard_context, scores_download, scores_or_404
from assessor.http import AuthenticatedRequest
from assessor.names import NameField
from assessor.work.organizing import WorkOrganizing, organizer_views
from assessor.work.pages import (
    TopicsField,
    assessor_choices,
    expected_version,
    label_fields,
    label_response,
    submit_response,
)
from assessor.work.queue import next_work
from assessor.work.roles import assessor_required, organizer_required
from assessor.work.timing import duration_label
from preferences import judging, scoring
from preferences.kinds import PREFERENCE_WORK
from reports.texts import request_texts

# (value, key, name, tone), as the judging frame shows them; the tone colours the choice.
LABEL_CHOICES = [
    ("1", "1", "left better", "yes"),
    ("2", "2", "right better", "yes"),
    ("0", "0", "tie", "part"),
]


class GivePreferencesForm(forms.Form):
    topics = TopicsField(help_text="One or more topic ids.")
    assessor = forms.ModelChoiceField(queryset=assessor_choices())
    name = NameField(
        label="Preference source",
        required=False,
        max_length=100,
        help_text=f"The name the preferences are kept under; defaults to {judging.PEOPLE_SOURCE!r}.",
    )


@require_GET
@assessor_required
def start(request: AuthenticatedRequest, work_id: int) -> HttpResponse:
    """The first pair without a preference."""
    work = judging.preference_work_for_assessor(work_id=work_id, user=request.user)
    page = judging.pair_page_load(work=work)
    if page is None:
        messages.info(request, f"Topic {work.topic_id} has no pair of reports to compare yet.")
        return redirect("home")
    return redirect("preferences:pair", work_id=work.pk, number=page.number)


@require_GET
@assessor_required
def pair(request: AuthenticatedRequest, work_id: int, number: int) -> HttpResponse:
    work = judging.preference_work_for_assessor(work_id=work_id, user=request.user)
    page = judging.pair_page_load(work=work, number=number)
    if page is None:
        raise Http404("No such pair.")
    context = {
        "page": page,
        "work": work,
        "topic": work.topic,
        "time_label": duration_label(work.active_seconds),
        "label_choices": LABEL_CHOICES,
        "request_text": request_texts([work.topic_id])[work.topic_id],
        "next_work": next_work(user=request.user, after=work) if page.frozen else None,
    }
    return render(request, "preferences/judge.html", context)


@require_POST
@assessor_required
def label(request: AuthenticatedRequest, work_id: int, number: int) -> HttpResponse:
    return label_response(
        request,
        work_id=work_id,
        save=lambda: judging.preference_save(
            work_id=work_id, user=request.user, number=number, **label_fields(request)
        ),
        back=reverse("preferences:pair", args=[work_id, number]),
    )


@require_POST
@assessor_required
def submit(request: AuthenticatedRequest, work_id: int) -> HttpResponse:
    return submit_response(
        request,
        submit=lambda: judging.preference_submit(
            work_id=work_id, user=request.user, expected_version=expected_version(request)
        ),
        back=reverse("preferences:judge", args=[work_id]),
    )


def _give(topic, data: dict, organizer):
    return judging.preference_work_give(topic=topic, assessor=data["assessor"], by=organizer, name=data["name"])


def _time_label(row) -> None:
    row.time_label = duration_label(row.seconds) if row.seconds else "—"


ORGANIZING = WorkOrganizing(
    kinds=(PREFERENCE_WORK,),
    title="Preference judging",
    form=GivePreferencesForm,
    give=_give,
    progress=judging.organizer_progress,
    detail=judging.work_detail,
    templates=("preferences/organize.html", "preferences/organize_work.html"),
    url_name="preferences:organize",
    item_labels=_time_label,
)
organize, organize_work, reopen = organizer_views(ORGANIZING)


@organizer_required
def leaderboard(request: AuthenticatedRequest) -> HttpResponse:
    """Runs ranked by a preference source's Borda counts (a run's mean over the source's topics)."""
    names = [name for (name,) in scoring.listed()]
    name = request.GET.get("source") or (names[0] if names else "")
    context: dict = {"names": names, "name": name}
    if name:
        scores = scores_or_404(lambda: scoring.borda_scores(name=name, per_topic=False))
        context.update(leaderboard_context(request, scores=scores, default_sort="borda", base_query={"source": name}))
    return render(request, "preferences/leaderboard.html", context)


@organizer_required
def download_scores(request: AuthenticatedRequest, name: str) -> HttpResponse | StreamingHttpResponse:
    return scores_download(request, lambda: scoring.borda_scores(name=name), f"borda.{name}")
