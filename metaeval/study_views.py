"""Pages of the agreement studies: second assessors (replicates) and disagreement studies, for organizers."""

import random
from typing import cast

from django import forms
from django.contrib import messages
from django.http import HttpResponse, StreamingHttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.views.decorators.http import require_GET

from assessor.collection.exporting import campaign_file_name
from assessor.http import AuthenticatedRequest
from assessor.jobs.forms import endpoint_choices
from assessor.models import LabelSource
from assessor.names import NameField
from assessor.work.pages import assessor_choices
from assessor.work.roles import organizer_required
from metaeval.models import Study
from metaeval.replicates import replicate_agreement, replicate_sources
from metaeval.stats import Confusion, nan_as_none
from metaeval.studies import (
    DEFAULT_K,
    StudyError,
    StudyReport,
    sample_items,
    study_create,
    study_families,
    study_judging,
    study_report,
)
from metaeval.study_export import study_csv, study_jsonl


def _source_choices() -> list[tuple[str, str]]:
    rows = LabelSource.objects.filter(family__in=study_families()).order_by("family", "name")
    return [(f"{s.family}:{s.name}", f"{s.family}:{s.name} ({s.get_kind_display()})") for s in rows]


class StudyForm(forms.Form):
    name = NameField(max_length=100, help_text="Names the study and the assessor's labels.")
    source_a = forms.ChoiceField(label="Source a")
    source_b = forms.ChoiceField(label="Source b")
    nugget_set = NameField(
        required=False,
        max_length=100,
        label="Nugget list or bank",
        help_text="What both sources labelled against: the nugget list (nugget assignment), the question bank "
        "(ARGUE-style).",
    )
    k = forms.IntegerField(min_value=1, initial=DEFAULT_K, label="Items per topic (k)")
    seed = forms.IntegerField(min_value=0, help_text="The same labels, k and seed draw the same sample.")
    assessor = forms.ModelChoiceField(queryset=assessor_choices(), label="Independent assessor")
    llm_name = NameField(
        required=False,
        max_length=100,
        label="LLM judge name",
        help_text="Optional: an LLM job judges the same items with the same prompt, under this name.",
    )
    llm_endpoint = forms.ChoiceField(
        required=False,
        label="LLM endpoint",
        help_text="The endpoint (and so the model) of that LLM job; default when empty.",
    )

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        choices = _source_choices()
        cast(forms.ChoiceField, self.fields["source_a"]).choices = choices
        cast(forms.ChoiceField, self.fields["source_b"]).choices = choices
        cast(forms.ModelChoiceField, self.fields["assessor"]).queryset = assessor_choices()
        cast(forms.ChoiceField, self.fields["llm_endpoint"]).choices = [("", "default"), *endpoint_choices()]

    def clean(self) -> dict:
        data = super().clean() or {}
        a, b = data.get("source_a", ""), data.get("source_b", "")
        if a and b and a.split(":")[0] != b.split(":")[0]:
            self.add_error("source_b", "Both sources must be of one family.")
        return data


@organizer_required
def studies(request: AuthenticatedRequest) -> HttpResponse:
    form = StudyForm(request.POST or None, initial={"seed": random.randrange(10_000)})
    if request.method == "POST" and form.is_valid():
        data = form.cleaned_data
        family, source_a = data["source_a"].split(":", 1)
        try:
            study = study_create(
                name=data["name"],
                family=family,
                source_a=source_a,
                source_b=data["source_b"].split(":", 1)[1],
                nugget_set=data["nugget_set"],
                k=data["k"],
                seed=data["seed"],
                assessor=data["assessor"],
                by=request.user,
                llm_name=data["llm_name"],
                llm_endpoint=data["llm_endpoint"] or None,
            )
        except StudyError as exc:
            form.add_error(None, str(exc))
        else:
            messages.success(request, f"Study {study.name}: {study.items_total} item(s) given to {study.assessor}.")
            return redirect("metaeval:study", name=study.name)
    context = {"form": form, "studies": Study.objects.select_related("source_a", "source_b", "created_by")}
    return render(request, "metaeval/studies.html", context, status=400 if form.errors else 200)


@require_GET
@organizer_required
def study(request: AuthenticatedRequest, name: str) -> HttpResponse:
    found = get_object_or_404(Study.objects.select_related("source_a", "source_b", "judge", "assessor"), name=name)
    report = study_report(found)
    context = {
        "study": found,
        "report": report,
        "pairs": [
            {
                "first": pair.first,
                "second": pair.second,
                "items": pair.confusion.total,
                "kappa": nan_as_none(pair.confusion.kappa),
                "agreement": nan_as_none(pair.confusion.agreement),
            }
            for pair in report.pairs
        ],
        "distributions": [(judge, judge.distribution(report.labels)) for judge in report.judges],
        "sample_rows": _sample_rows(found, report),
    }
    return render(request, "metaeval/study.html", context)


def _sample_rows(found: Study, report: StudyReport) -> list[dict]:
    """The sampled items in the assessor's order on each topic, each judge's label of it, and the answer it is
    about: a link to the answer's page of every judge's labels."""
    sample = sample_items(found)
    shown = study_judging(found.family).shown({item for items in sample.values() for item in items})
    return [
        {
            "topic": topic,
            "position": position,
            "text": shown[item].text if item in shown else str(item),
            "answer_id": shown[item].answer_id if item in shown else None,
            "labels": [judge.labels.get(item, "") for judge in report.judges],
        }
        for topic, items in sample.items()
        for position, item in enumerate(items, start=1)
    ]


@require_GET
@organizer_required
def study_plot(request: AuthenticatedRequest, name: str) -> HttpResponse:
    found = get_object_or_404(Study, name=name)
    report = study_report(found)
    counts = [(f"{j.role_name}: {j.name}", j.distribution(report.labels)) for j in report.judges]
    from metaeval.plots import distribution_png  # matplotlib, imported by the pages that draw (0.4 s)

    png = distribution_png(counts, labels=report.labels, title=f"Labels on the {report.items} sampled items")
    return HttpResponse(png, content_type="image/png")


@require_GET
@organizer_required
def study_download(request: AuthenticatedRequest, name: str, layout: str) -> StreamingHttpResponse:
    found = get_object_or_404(Study, name=name)
    lines = study_csv(found) if layout == "csv" else study_jsonl(found)
    response = StreamingHttpResponse(lines, content_type="text/csv" if layout == "csv" else "application/x-ndjson")
    response["Content-Disposition"] = f'attachment; filename="{campaign_file_name(f"study.{found.name}.{layout}")}"'
    return response


@require_GET
@organizer_required
def replicates(request: AuthenticatedRequest) -> HttpResponse:
    rows = []
    for source in replicate_sources():
        agreement = replicate_agreement(source)
        rows.append(
            {
                "agreement": agreement,
                "matrix": [
                    {"label": label, "counts": counts}
                    for label, counts in zip(agreement.human.labels, agreement.human.counts, strict=True)
                ],
                "judges": [_figures("people", agreement.first, agreement.replicate, agreement.human)]
                + [
                    figures
                    for llm in agreement.llms
                    for figures in (
                        _figures("person and LLM", agreement.first, llm.name, llm.with_first),
                        _figures("person and LLM", agreement.replicate, llm.name, llm.with_replicate),
                    )
                ],
                "taus": [(tau.metric, nan_as_none(tau.tau_run), tau.runs) for tau in agreement.taus],
            }
        )
    return render(request, "metaeval/replicates.html", {"rows": rows})


def _figures(kind: str, first: str, second: str, confusion: Confusion) -> dict:
    """One row of the agreement table: who with whom, on how many items, and the four figures."""
    return {
        "kind": kind,
        "first": first,
        "second": second,
        "items": confusion.total,
        "kappa": nan_as_none(confusion.kappa),
        "linear": nan_as_none(confusion.kappa_linear),
        "quadratic": nan_as_none(confusion.kappa_quadratic),
        "alpha": nan_as_none(confusion.alpha_ordinal),
    }
