"""Pages of ManualAssign (assessors) and of its distribution and progress (organizers), from the label-app kit
(assessor.work.kit).

A label is a POST of a small form (see assessor.work.pages for the answers).
Everything the assessor's pages show comes from assignment.judging, which
reads no LLM output and no run.
"""

from typing import cast

from django import forms

from assessor.names import NameField
from assessor.work.kit import LabelApp, Posted
from assessor.work.organizing import WorkOrganizing
from assessor.work.pages import TopicsField, assessor_choices
from assessor.work.timing import duration_label
from assignment import judging
from assignment.kinds import ASSIGN_MANUAL
from nuggets.models import NuggetSet

LABEL_CHOICES = [
    ("support", "s", "support", "yes"),
    ("partial_support", "p", "partial", "part"),
    ("not_support", "n", "not support", "no"),
]


class GiveAssignForm(forms.Form):
    topics = TopicsField(help_text="One or more topic ids.")
    assessor = forms.ModelChoiceField(queryset=assessor_choices())
    nuggets = forms.ChoiceField(
        label="Nugget list",
        required=False,
        help_text="The list of people's nuggets each answer is labelled against; every topic given needs one of "
        "that name.",
    )
    assigner = NameField(
        label="Assigner name",
        required=False,
        max_length=100,
        help_text=f"The name the assessor's labels are scored under; defaults to {judging.MANUAL_ASSIGNER!r}.",
    )
    replicate_of = NameField(
        label="Replicate of",
        required=False,
        max_length=100,
        help_text="A second assessor: the assigner whose ManualAssign this work repeats, blind to its labels "
        "(the assigner name above is then required).",
    )

    def __init__(self, *args, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        # A choice of the lists people made, each with the number of topics that have it; a topic with two lists
        # (the demo's all have) was refused when the name was left to be guessed. "The topic's only list" is
        # offered only while no topic has several; otherwise the list on the most topics is chosen at first, so
        # that the form as it opens gives work that is accepted.
        field = cast(forms.ChoiceField, self.fields["nuggets"])
        lists = judging.human_lists()
        named = [(name, f"{name} (on {topics} topic{'s' if topics != 1 else ''})") for name, topics in lists]
        topics_with_lists = (
            NuggetSet.objects.filter(kind__in=judging.HUMAN_NUGGET_KINDS, form=NuggetSet.Form.FACTS)
            .values("topic")
            .distinct()
            .count()
        )
        if sum(topics for _, topics in lists) > topics_with_lists:
            field.choices = named
            field.initial = max(lists, key=lambda row: row[1])[0]
        else:
            field.choices = [("", "the topic's only list"), *named]

    def clean(self) -> dict:
        data = super().clean() or {}
        if data.get("replicate_of") and not data.get("assigner"):
            self.add_error("assigner", "A replicate needs an assigner name of its own.")
        return data


# --- Organizers ----------------------------------------------------------------------


def _give(topic, data: dict, organizer):
    if data["replicate_of"]:
        return judging.assign_replicate_give(
            topic=topic,
            assessor=data["assessor"],
            by=organizer,
            of_assigner=data["replicate_of"],
            assigner_name=data["assigner"],
        )
    return judging.assign_work_give(
        topic=topic,
        assessor=data["assessor"],
        by=organizer,
        nugget_set_name=data["nuggets"],
        assigner_name=data["assigner"],
    )


def _row_labels(row) -> None:
    row.per_answer_label = duration_label(row.seconds_per_answer) if row.seconds_per_answer else "—"


def _answer_labels(row) -> None:
    row.time_label = duration_label(row.seconds) if row.labels_done else "—"


MANUAL_ASSIGN = LabelApp(
    namespace="judge",
    item="answer",
    template="judge/assign.html",
    label_choices=LABEL_CHOICES,
    has_items=lambda work: bool(judging.answer_order(work=work)),
    page_load=judging.assign_page_load,
    save=judging.assignment_label_save,
    posted=(Posted("nugget", "nugget_id"),),
    submit=judging.assign_submit,
    empty="has no answers to judge yet",
    prefix="assign",
    start_name="assign",
    organizing=WorkOrganizing(
        kinds=(ASSIGN_MANUAL,),
        title="ManualAssign",
        form=GiveAssignForm,
        give=_give,
        progress=judging.assign_progress,
        detail=lambda work: judging.assign_work_detail(work=work),
        templates=("judge/organize.html", "judge/organize_work.html"),
        url_name="judge:organize",
        row_labels=_row_labels,
        item_labels=_answer_labels,
    ),
)
