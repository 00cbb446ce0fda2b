"""The ARGUE-style pages: an assessor's sentence pages and the organizer's giving and progress pages (from the
label-app kit, assessor.work.kit), the leaderboard of a source and its score downloads.

Everything the assessor's pages show comes from argue.judging, which reads no LLM judgment and no run.
"""

from django import forms
from django.http import HttpResponse, StreamingHttpResponse
from django.shortcuts import render

from argue import judging, scoring
from argue.exporting import argue_export_notes, argue_lines
from argue.kinds import ARGUE_WORK
from assessor.collection.pages import download_response, leaderboard_context, scores_download, scores_or_404
from assessor.http import AuthenticatedRequest
from assessor.names import NameField
from assessor.work.kit import LabelApp, Posted, time_or_dash
from assessor.work.organizing import WorkOrganizing
from assessor.work.pages import TopicsField, assessor_choices
from assessor.work.roles import organizer_required
from reports.texts import work_request

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
    negatives = forms.BooleanField(
        required=False,
        label="Negative assertions",
        help_text="ARGUE's option: ask whether a sentence citing nothing is a negative assertion (then every gold "
        "answer is asked of it).",
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
        negatives=data["negatives"],
    )


ARGUE_JUDGING = LabelApp(
    namespace="argue",
    item="sentence",
    template="argue/judge.html",
    label_choices=LABEL_CHOICES,
    page_load=judging.sentence_page_load,
    save=judging.argue_save,
    # The save names its sentence by the report's token and the sentence's index, its row by the row's token.
    posted=(Posted("sentence", "sentence_index", default=-1), Posted("row", "row", default=None)),
    numbered=False,
    submit=judging.argue_submit,
    empty="has no report sentence to judge yet",
    context=work_request,
    organizing=WorkOrganizing(
        kinds=(ARGUE_WORK,),
        title="ARGUE-style judging",
        form=GiveArgueForm,
        give=_give,
        progress=judging.organizer_progress,
        detail=judging.work_detail,
        templates=("argue/organize.html", "argue/organize_work.html"),
        url_name="argue:organize",
        item_labels=time_or_dash,
    ),
)


@organizer_required
def leaderboard(request: AuthenticatedRequest) -> HttpResponse:
    """Runs ranked by an ARGUE-style source's F1 (a run's mean of its topics' F1)."""
    names = [name for (name,) in scoring.listed()]
    name = request.GET.get("source") or (names[0] if names else "")
    context: dict = {"names": names, "name": name}
    if name:
        scores = scores_or_404(lambda: scoring.argue_scores(name=name))  # per topic: the plot's intervals
        context.update(leaderboard_context(request, scores=scores, default_sort="f1", base_query={"source": name}))
        from metaeval.plots import leaderboard_plot  # matplotlib, imported by the pages that draw (0.4 s)

        context["plot"] = leaderboard_plot(scores, "f1")
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
