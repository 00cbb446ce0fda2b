from typing import cast

from django import forms

from assessor.jobs.forms import LaunchForm
from assessor.models import QrelSource
from assessor.names import NameField
from assessor.work.pages import TopicsField, assessor_choices
from nuggets.models import NuggetSet

CONDITION_CHOICES = [
    (NuggetSet.Kind.MANUAL, "ManualNuggets"),
    (NuggetSet.Kind.AUTO_EDIT, "AutoNuggets+Edits"),
    ("bank", "Question bank (written from scratch)"),
    ("bank_auto_edit", "Question bank (post-editing an LLM's bank)"),
]


class GiveWorkForm(forms.Form):
    topics = TopicsField(help_text="One or more topics.")
    assessor = forms.ModelChoiceField(queryset=assessor_choices())
    condition = forms.ChoiceField(choices=CONDITION_CHOICES)
    name = NameField(
        required=False, max_length=100, help_text="Name of the nugget set; defaults to the condition."
    )
    drafts = NameField(
        required=False, max_length=100, help_text="Post-editing: the drafts (or LLM bank) to start from; defaults to the newest."
    )


class AutoNuggetsForm(LaunchForm):
    qrels = forms.ChoiceField(help_text="The source whose segments graded >= 1 are read (umbrela for the fully automatic condition).")
    drafts = forms.BooleanField(
        required=False, help_text="Stop after creation: 30 drafts without importance, for AutoNuggets+Edits."
    )

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        names = list(QrelSource.objects.values_list("name", flat=True))
        cast(forms.ChoiceField, self.fields["qrels"]).choices = [(name, name) for name in names]
        if "nist" in names:
            self.fields["qrels"].initial = "nist"

    def selection(self) -> dict:
        return {**super().selection(), "qrels": self.cleaned_data["qrels"], "drafts": self.cleaned_data["drafts"]}
