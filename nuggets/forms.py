from typing import cast

from django import forms

from assessor.jobs.forms import LaunchForm
from assessor.models import QrelSource
from assessor.names import NameField
from assessor.work.pages import TopicsField, assessor_choices
from nuggets.bankchoices import llm_banks_offered
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
    name = NameField(required=False, max_length=100, help_text="Name of the nugget set; defaults to the condition.")
    drafts = NameField(
        required=False,
        max_length=100,
        help_text="AutoNuggets+Edits: the draft nuggets to start from; defaults to the newest.",
    )
    bank = forms.ChoiceField(
        required=False,
        label="LLM bank to post-edit",
        widget=forms.RadioSelect,
        help_text="Question bank post-edit: the counted LLM bank each topic's copy starts from, with what made it "
        "and its size.",
    )

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.offered = offered = llm_banks_offered()
        bank = cast(forms.ChoiceField, self.fields["bank"])
        bank.choices = [(choice.name, choice.label) for choice in offered]
        # One bank is no choice to make, but it is shown; of several, none is picked for the organizer.
        if len(offered) == 1:
            bank.initial = offered[0].name
        elif not offered:
            bank.help_text = "No LLM question bank counts yet (submitted, not being made by a job): make or import one."

    def clean(self) -> dict:
        data = super().clean() or {}
        if data.get("condition") != "bank_auto_edit":
            return data
        if data.get("drafts"):
            self.add_error("drafts", "For a question bank post-edit, choose the LLM bank below instead.")
        if not data.get("bank") and len(self.offered) > 1:
            self.add_error("bank", "Choose the LLM bank to post-edit: each of these would start it differently.")
        return data

    def drafts_name(self) -> str:
        """The set the post-edit starts from: the bank chosen, or the drafts named."""
        if self.cleaned_data["condition"] == "bank_auto_edit":
            return self.cleaned_data["bank"]
        return self.cleaned_data["drafts"]


class AutoNuggetsForm(LaunchForm):
    qrels = forms.ChoiceField(
        help_text="The source whose segments graded >= 1 are read (umbrela for the fully automatic condition)."
    )
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
