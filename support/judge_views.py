"""Pages of support judging (assessors, both conditions) and of its distribution and progress (organizers).

The assessor's page reads through support.judging: a from-scratch page reads
no LLM output at all; a post-editing page shows the LLM label of each pair
(that is the condition), never the method's name nor a run.
"""

from django import forms
from django.contrib import messages
from django.http import HttpResponse
from django.shortcuts import redirect, render
from django.urls import reverse
from django.views.decorators.http import require_GET, require_POST

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
from assessor.work.roles import assessor_required
from assessor.work.timing import duration_label
from support import judging, services
from support.kinds import SUPPORT_POSTEDIT, SUPPORT_SCRATCH

# (value, key, name, tone): the tone colours the label the same on every page (green, yellow, red).
LABEL_CHOICES = [("2", "f", "FS", "yes"), ("1", "p", "PS", "part"), ("0", "n", "NS", "no")]


class GiveSupportForm(forms.Form):
    topics = TopicsField(help_text="One or more topic ids.")
    assessor = forms.ModelChoiceField(queryset=assessor_choices())
    condition = forms.ChoiceField(
        choices=[
            (SUPPORT_SCRATCH, "from scratch"),
            (SUPPORT_POSTEDIT, "post-editing LLM labels"),
        ]
    )
    llm_method = NameField(
        label="LLM method",
        required=False,
        max_length=100,
        help_text="Post-editing: the automatic method whose labels are shown; defaults to the topic's only one.",
    )
    method_name = NameField(
        label="Method name",
        required=False,
        max_length=100,
        help_text="The name the assessor's labels are scored under; defaults to the condition (scratch, postedit).",
    )
    replicate_of = NameField(
        label="Replicate of",
        required=False,
        max_length=100,
        help_text="A second assessor: the from-scratch method whose judging this work repeats, blind to its "
        "labels (the method name above is then required).",
    )

    def clean(self) -> dict:
        data = super().clean() or {}
        if data.get("replicate_of") and not data.get("method_name"):
            self.add_error("method_name", "A replicate needs a method name of its own.")
        return data


# --- Assessors -------------------------------------------------------------------------


@require_GET
@assessor_required
def start(request: AuthenticatedRequest, work_id: int) -> HttpResponse:
    work = judging.support_work_for_assessor(work_id=work_id, user=request.user)
    if not judging.topic_pairs(work=work).order:
        messages.info(request, f"Topic {work.topic_id} has no cited sentences to judge yet.")
        return redirect("home")
    page = judging.support_page_load(work=work)
    return redirect("support:answer", work_id=work.pk, number=page.number)


@require_GET
@assessor_required
def answer(request: AuthenticatedRequest, work_id: int, number: int) -> HttpResponse:
    work = judging.support_work_for_assessor(work_id=work_id, user=request.user)
    page = judging.support_page_load(work=work, number=number)
    context = {
        "page": page,
        "work": work,
        "topic": work.topic,
        "time_label": duration_label(work.active_seconds),
        "label_choices": LABEL_CHOICES,
        "next_work": next_work(user=request.user, after=work) if page.frozen else None,
    }
    return render(request, "support/judge.html", context)


@require_POST
@assessor_required
def label(request: AuthenticatedRequest, work_id: int, number: int) -> HttpResponse:
    sentence = int_param(request, "sentence")
    return label_response(
        request,
        work_id=work_id,
        save=lambda: services.support_label_save(
            work_id=work_id,
            user=request.user,
            number=number,
            sentence_index=sentence if sentence is not None else -1,
            **label_fields(request),
        ),
        back=reverse("support:answer", args=[work_id, number]),
    )


@require_POST
@assessor_required
def submit(request: AuthenticatedRequest, work_id: int) -> HttpResponse:
    return submit_response(
        request,
        submit=lambda: services.support_submit(
            work_id=work_id, user=request.user, expected_version=expected_version(request)
        ),
        back=reverse("support:judge", args=[work_id]),
    )


# --- Organizers -----------------------------------------------------------------------------


def _give(topic, data: dict, organizer):
    if data["replicate_of"]:
        return services.support_replicate_give(
            topic=topic,
            assessor=data["assessor"],
            by=organizer,
            of_method=data["replicate_of"],
            method_name=data["method_name"],
        )
    return services.support_work_give(
        topic=topic,
        assessor=data["assessor"],
        kind=data["condition"],
        by=organizer,
        llm_method=data["llm_method"],
        method_name=data["method_name"],
    )


def _row_labels(row) -> None:
    row.per_pair_label = f"{row.seconds_per_pair:.1f} s" if row.seconds_per_pair is not None else "—"
    row.change_label = f"{row.change_rate:.0%} ({row.changed}/{row.shown})" if row.change_rate is not None else "—"


LABEL_NAMES = {value: name for value, _key, name, _tone in LABEL_CHOICES}


def _pair_labels(pair) -> None:
    pair.label_name = LABEL_NAMES.get(str(pair.label), "—") if pair.label is not None else "—"
    pair.shown_name = LABEL_NAMES.get(str(pair.shown), "—") if pair.shown is not None else "—"
    pair.time_label = f"{pair.seconds:.1f} s" if pair.seconds is not None else "—"


ORGANIZING = WorkOrganizing(
    kinds=tuple(judging.SUPPORT_KINDS),
    title="Support judging",
    form=GiveSupportForm,
    give=_give,
    progress=judging.support_progress,
    detail=lambda work: judging.support_work_detail(work=work),
    templates=("support/organize.html", "support/organize_work.html"),
    url_name="support:organize",
    row_labels=_row_labels,
    item_labels=_pair_labels,
    context=lambda rows: {
        "missing": judging.missing_text_pairs(topic_ids=sorted({row.work.topic_id for row in rows}) or None)
    },
)
organize, organize_work, reopen = organizer_views(ORGANIZING)
