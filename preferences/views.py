"""The preference pages: an assessor's pair pages and the organizer's giving and progress pages (from the label-app
kit, assessor.work.kit), and the leaderboard.

Everything the assessor's pages show comes from preferences.judging, which reads no LLM output and no run.
"""

from django import forms
from django.http import HttpResponse, StreamingHttpResponse
from django.shortcuts import render

from assessor.collection.pages import leaderboard_context, scores_download, scores_or_404
from assessor.http import AuthenticatedRequest
from assessor.names import NameField
from assessor.work.kit import LabelApp, time_or_dash
from assessor.work.organizing import WorkOrganizing
from assessor.work.pages import TopicsField, assessor_choices
from assessor.work.roles import organizer_required
from preferences import judging, scoring
from preferences.kinds import PREFERENCE_WORK
from reports.texts import work_request

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


def _give(topic, data: dict, organizer):
    return judging.preference_work_give(topic=topic, assessor=data["assessor"], by=organizer, name=data["name"])


PREFERENCE_JUDGING = LabelApp(
    namespace="preferences",
    item="pair",
    template="preferences/judge.html",
    label_choices=LABEL_CHOICES,
    page_load=judging.pair_page_load,
    save=judging.preference_save,
    submit=judging.preference_submit,
    empty="has no pair of reports to compare yet",
    context=work_request,
    organizing=WorkOrganizing(
        kinds=(PREFERENCE_WORK,),
        title="Preference judging",
        form=GivePreferencesForm,
        give=_give,
        progress=judging.organizer_progress,
        detail=judging.work_detail,
        templates=("preferences/organize.html", "preferences/organize_work.html"),
        url_name="preferences:organize",
        item_labels=time_or_dash,
    ),
)


@organizer_required
def leaderboard(request: AuthenticatedRequest) -> HttpResponse:
    """Runs ranked by a preference source's Borda counts (a run's mean over the source's topics)."""
    names = [name for (name,) in scoring.listed()]
    name = request.GET.get("source") or (names[0] if names else "")
    context: dict = {"names": names, "name": name}
    if name:
        scores = scores_or_404(lambda: scoring.borda_scores(name=name))  # per topic: the plot's intervals
        context.update(leaderboard_context(request, scores=scores, default_sort="borda", base_query={"source": name}))
        from metaeval.plots import leaderboard_plot  # matplotlib, imported by the pages that draw (0.4 s)

        context["plot"] = leaderboard_plot(scores, "borda")
    return render(request, "preferences/leaderboard.html", context)


@organizer_required
def download_scores(request: AuthenticatedRequest, name: str) -> HttpResponse | StreamingHttpResponse:
    return scores_download(request, lambda: scoring.borda_scores(name=name), f"borda.{name}")
