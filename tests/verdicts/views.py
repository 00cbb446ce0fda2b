"""The verdict pages: the assessor's page, the organizer's giving page, the leaderboard and the downloads."""

from django import forms
from django.contrib import messages
from django.http import HttpResponse, StreamingHttpResponse
from django.shortcuts import redirect, render
from django.urls import reverse
from django.views.decorators.http import require_GET, require_POST

from assessor.collection.pages import download_response, leaderboard_context, scores_download, scores_or_404
from assessor.http import AuthenticatedRequest
from assessor.work.pages import (
    TopicsField,
    assessor_choices,
    expected_version,
    give_all,
    label_fields,
    label_response,
    submit_response,
)
from assessor.work.roles import assessor_required, organizer_required
from assessor.work.timing import duration_label
from tests.verdicts import work
from tests.verdicts.exporting import verdict_lines
from tests.verdicts.scoring import listed, verdict_scores


class GiveVerdictsForm(forms.Form):
    topics = TopicsField(help_text="One or more topic ids.")
    assessor = forms.ModelChoiceField(queryset=assessor_choices())
    name = forms.SlugField(required=False, max_length=100, help_text=f"The source; defaults to {work.PEOPLE_SOURCE!r}.")


@require_GET
@assessor_required
def judge(request: AuthenticatedRequest, work_id: int) -> HttpResponse:
    item = work.work_for_assessor(work_id=work_id, user=request.user)
    context = {"work": item, "rows": work.page_rows(item), "time_label": duration_label(item.active_seconds)}
    return render(request, "verdicts/judge.html", context)


@require_POST
@assessor_required
def label(request: AuthenticatedRequest, work_id: int, number: int) -> HttpResponse:
    fields = label_fields(request)
    return label_response(
        request,
        work_id=work_id,
        save=lambda: work.verdict_save(work_id=work_id, user=request.user, number=number, **fields),
        back=reverse("verdicts:judge", args=[work_id]),
    )


@require_POST
@assessor_required
def submit(request: AuthenticatedRequest, work_id: int) -> HttpResponse:
    return submit_response(
        request,
        submit=lambda: work.verdict_submit(work_id=work_id, user=request.user, expected_version=expected_version(request)),
        back=reverse("verdicts:judge", args=[work_id]),
    )


@organizer_required
def organize(request: AuthenticatedRequest) -> HttpResponse:
    form = GiveVerdictsForm(request.POST or None)
    if request.method == "POST" and form.is_valid():
        data = form.cleaned_data
        given = give_all(
            form,
            lambda topic: work.verdict_work_give(topic=topic, assessor=data["assessor"], by=request.user, name=data["name"]),
        )
        if given:
            messages.success(request, f"Verdicts given to {data['assessor']}.")
            return redirect("verdicts:organize")
    return render(request, "verdicts/organize.html", {"form": form}, status=400 if form.errors else 200)


@organizer_required
def leaderboard(request: AuthenticatedRequest) -> HttpResponse:
    names = [name for (name,) in listed()]
    name = request.GET.get("source") or (names[0] if names else "")
    context: dict = {"names": names, "name": name}
    if name:
        scores = scores_or_404(lambda: verdict_scores(name=name, per_topic=False))
        context.update(leaderboard_context(request, scores=scores, default_sort="yes", base_query={"source": name}))
    return render(request, "verdicts/leaderboard.html", context)


@organizer_required
def download_verdicts(request: AuthenticatedRequest, name: str) -> StreamingHttpResponse:
    scores_or_404(lambda: verdict_scores(name=name, per_topic=False))  # a 404 for a source without verdicts
    return download_response(verdict_lines(name=name), f"verdicts.{name}.jsonl")


@organizer_required
def download_scores(request: AuthenticatedRequest, name: str) -> HttpResponse | StreamingHttpResponse:
    return scores_download(request, lambda: verdict_scores(name=name), f"verdict_scores.{name}")
