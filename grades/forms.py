from typing import cast

from django import forms

from assessor.jobs.forms import RunsLaunchForm
from nuggets.banks import bank_names


class GradesLaunchForm(RunsLaunchForm):
    bank = forms.ChoiceField(help_text="The question bank whose questions every report is graded on.")
    documents = forms.BooleanField(
        required=False,
        help_text="Grade the documents each report cites instead of its text (a question's grade: the highest).",
    )

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        cast(forms.ChoiceField, self.fields["bank"]).choices = [(name, name) for name in bank_names()]

    def selection(self) -> dict:
        return {**super().selection(), "bank": self.cleaned_data["bank"], "documents": self.cleaned_data["documents"]}
