from typing import cast

from django import forms

from assessor.jobs.forms import RunsLaunchForm
from grades.llm import DEFAULT_GATE
from nuggets.banks import bank_names


class GradesLaunchForm(RunsLaunchForm):
    bank = forms.ChoiceField(help_text="The question bank whose questions every report is graded on.")
    documents = forms.BooleanField(
        required=False,
        help_text="Grade the documents each report cites instead of its text (a question's grade: the highest).",
    )
    report_and_documents = forms.BooleanField(
        required=False,
        label="Report and documents",
        help_text="Grade the report, then the documents it cites on each question whose report grade reaches the "
        "gate; a question scores the report's grade times its best document's (0-25).",
    )
    gate = forms.IntegerField(
        min_value=0,
        max_value=5,
        initial=DEFAULT_GATE,
        required=False,
        help_text="With report and documents: the report grade from which its documents are graded.",
    )

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        cast(forms.ChoiceField, self.fields["bank"]).choices = [(name, name) for name in bank_names()]

    def selection(self) -> dict:
        gate = self.cleaned_data["gate"]
        return {
            **super().selection(),
            "bank": self.cleaned_data["bank"],
            "documents": self.cleaned_data["documents"],
            "report_and_documents": self.cleaned_data["report_and_documents"],
            "gate": DEFAULT_GATE if gate is None else gate,
        }
