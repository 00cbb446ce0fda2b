"""Pages of support judging (assessors, both conditions) and of its distribution and progress (organizers), from
the label-app kit (assessor.work.kit).

The assessor's page reads through support.judging: a from-scratch page reads
no LLM output at all; a post-editing page shows the LLM label of each pair
(that is the condition), never the method's name nor a run.
"""

from django import forms

from assessor.names import NameField
from assessor.work.kit import LabelApp, Posted
from assessor.work.organizing import WorkOrganizing
from assessor.work.pages import TopicsField, assessor_choices
from support import judging, services
from support.kinds import SUPPORT_POSTEDIT, SUPPORT_SCRATCH
from support.models import SupportLabel

_TONES = {SupportLabel.Label.FS: "yes", SupportLabel.Label.PS: "part", SupportLabel.Label.NS: "no"}
# (value, key, name, tone) of each button, keys from support.judging.LABEL_KEYS.
LABEL_CHOICES = [
    (str(int(label)), judging.LABEL_KEYS[label], judging.LABEL_SHORT[label], tone) for label, tone in _TONES.items()
]


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


SUPPORT_JUDGING = LabelApp(
    namespace="support",
    item="answer",
    template="support/judge.html",
    label_choices=LABEL_CHOICES,
    has_items=lambda work: bool(judging.topic_pairs(work=work).order),
    page_load=judging.support_page_load,
    save=services.support_label_save,
    posted=(Posted("sentence", "sentence_index", default=-1),),
    submit=services.support_submit,
    empty="has no cited sentences to judge yet",
    prefix="judge",
    organizing=WorkOrganizing(
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
    ),
)
