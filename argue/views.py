"""The ARGUE-style pages: an assessor's sentence pages, the organizer's giving and progress pages, the
leaderboard of a source and its score downloads.

Everything the assessor's pages show comes from argue.judging, which reads no LLM judgment and no run.
"""

from django import forms
from django.contrib import messages
from django.http import Http404, HttpResponse, StreamingHttpResponse
from django.shortcuts import redirect, render
from django.urls import reverse
from django.views.decorators.http import require_GET, require_POST

from argue import judging, scoring
from argue.exporting import argue_export_notes, argue_lines
from argue.kinds import ARGUE_WORK
from assessor.collection.pages import download_response, leaderboard_context, scores_download, scores_or_404
from assessor.http import AuthenticatedRequest
from assessor.names import NameField
from assessor.work.organizing import WorkOrganizing, organizer_views
from assessor.work.pages import (
    TopicsField,
    assessor_choices,
    expected_version,
    int_param,
    label_fields,
    label_response,
    submit_response,
)
from assessor.work.queue import next_work
from assessor.work.roles import assessor_required, organizer_required
from assessor.work.timing import duration_label
from reports.texts import request_texts

# (value, key, name, tone), as the judging frame shows them; the tone colours the choice.
LABEL_CHOICES = [("yes", "y", "yes", "yes"), ("no", "n", "no", "no")]


class GiveArgueForm(forms.Form):
    topics = TopicsField(help_text="One or more topic ids.")
    assessor = forms.ModelChoiceField(queryset=assessor_choices())
    bank = NameField(
        required=False,
        max_length=100,
        help_text="The question bank whose gold answers are judged; defaults to the topic's only bank.",
    )
    check_all = forms.BooleanField(
        required=False,
        label="Every gold answer",
        help_text="Ask every gold answer of each sentence (by default only those whose documents it cites).",
    )
    name = NameField(
        label="ARGUE-style source",
        required=False,
        max_length=100,
        help_text=f"The name the judgments are kept under; defaults to {judging.PEOPLE_SOURCE!r}.",
    )
    second_of = NameField(
        label="Second assessor of",
        required=False,
        max_length=100,
        help_text="A second assessor: the people's source whose judging this work repeats independently, blind "
        "to its judgments (the source name above is then required; bank and option are the first's).",
    )

    def clean(self) -> dict:
        data = super().clean() or {}
        if data.get("second_of") and not data.get("name"):
            self.add_error("name", "A second assessor needs a source name of its own.")
        return data


@require_GET
@assessor_required
def start(request: AuthenticatedRequest, work_id: int) -> HttpResponse:
    """The first sentence with a question unanswered."""
    work = judging.argue_work_for_assessor(work_id=work_id, user=request.user)
    page = judging.sentence_page_load(work=work)
    if page is None:
        messages.info(request, f"Topic {work.topic_id} has no report sentence to judge yet.")
        return redirect("home")
    return redirect("argue:sentence", work_id=work.pk, number=page.number)


@require_GET
@assessor_required
def sentence(request: AuthenticatedRequest, work_id: int, number: int) -> HttpResponse:
    work = judging.argue_work_for_assessor(work_id=work_id, user=request.user)
    page = judging.sentence_page_load(work=work, number=number)
    if page is None:
        raise Http404("No such sentence.")
    context = {
        "page": page,
        "work": work,
        "topic": work.topic,
        "time_label": duration_label(work.active_seconds),
        "label_choices": LABEL_CHOICES,
        "request_text": request_texts([work.topic_id])[work.topic_id],
        "next_work": next_work(user=request.user, after=work) if page.frozen else None,
    }
    return render(request, "argue/judge.html", context)


@require_POST
@assessor_required
def label(request: AuthenticatedRequest, work_id: int, number: int) -> HttpResponse:
    index = int_param(request, "sentence")
    return label_response(
        request,
        work_id=work_id,
        save=lambda: judging.argue_save(
            work_id=work_id,
            user=request.user,
            sentence_index=index if index is not None else -1,
            row=request.POST.get("row", ""),
            **label_fields(request),
        ),
        back=reverse("argue:sentence", args=[work_id, number]),
    )


@require_POST
@assessor_required
def submit(request: AuthenticatedRequest, work_id: int) -> HttpResponse:
    return submit_response(
        request,
        submit=lambda: judging.argue_submit(
            work_id=work_id, user=request.user, expected_version=expected_version(request)
        ),
        back=reverse("argue:judge", args=[work_id]),
    )


def _give(topic, data: dict, organizer):
    if data["second_of"]:
        return judging.argue_second_give(
            topic=topic, assessor=data["assessor"], by=organizer, of_name=data["second_of"], name=data["name"]
        )
    return judging.argue_work_give(
        topic=topic,
        assessor=data["assessor"],
        by=organizer,
        name=data["name"],
        bank=data["bank"],
        check_all=data["check_all"],
    )


def _time_label(row) -> None:
    row.time_label = duration_label(row.seconds) if row.seconds else "—"


ORGANIZING = WorkOrganizing(
    kinds=(ARGUE_WORK,),
    title="ARGUE-style judging",
    form=GiveArgueForm,
    give=_give,
    progress=judging.organizer_progress,
    detail=judging.work_detail,
    templates=("argue/organize.html", "argue/organize_work.html"),
    url_name="argue:organize",
    item_labels=_time_label,
)
organize, organize_work, reopen = organizer_views(ORGANIZING)


@organizer_required
def leaderboard(request: AuthenticatedRequest) -> HttpResponse:
    """Runs ranked by an ARGUE-style source's F1 (a run's mean of its topics' F1)."""
    names = [name for (name,) in scoring.listed()]
    name = request.GET.get("source") or (names[0] if names else "")
    context: dict = {"names": names, "name": name}
    if name:
        scores = scores_or_404(lambda: scoring.argue_scores(name=name, per_topic=False))
        context.update(leaderboard_context(request, scores=scores, default_sort="f1", base_query={"source": name}))
        context["notes"] = scoring.notes([(name,)])[(name,)]  # what keeps the scores from being final
        context["download_notes"] = argue_export_notes(name=name)  # said beside the judgments' link
    return render(request, "argue/leaderboard.html", context)


@organizer_required
def download_scores(request: AuthenticatedRequest, name: str) -> HttpResponse | StreamingHttpResponse:
    return scores_download(request, lambda: scoring.argue_scores(name=name), f"argue.{name}")


# The download's header naming what it left out (or wrote as provisional), as export_argue warns of it.
OPEN_WORK_HEADER = "X-Open-Work"


@organizer_required
def download_judgments(request: AuthenticatedRequest, name: str) -> StreamingHttpResponse:
    """A source's judgments as export_argue writes them; its warnings in `X-Open-Work`, absent when all is final."""
    scores_or_404(lambda: scoring.argue_scores(name=name, per_topic=False))  # a 404 for a source without judgments
    response = download_response(argue_lines(name=name), f"argue.{name}.jsonl")
    notes = argue_export_notes(name=name)
    if notes:
        response[OPEN_WORK_HEADER] = " ".join(notes)
    return response
