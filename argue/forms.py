from typing import cast

from django import forms

from assessor.jobs.forms import RunsLaunchForm
from nuggets.banks import bank_names


class ArgueLaunchForm(RunsLaunchForm):
    bank = forms.ChoiceField(
        help_text="The question bank whose questions and gold answers the reports are judged against."
    )
    check_all = forms.BooleanField(
        required=False,
        help_text="Check each sentence against every gold answer (by default only the answers whose documents it cites).",
    )

    negatives = forms.BooleanField(
        required=False,
        label="Negative assertions",
        help_text="ARGUE's option: an uncited negative assertion is judged against every gold answer (rewarded if "
        "one confirms it, else penalized).",
    )

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        cast(forms.ChoiceField, self.fields["bank"]).choices = [(name, name) for name in bank_names()]

    def selection(self) -> dict:
        return {
            **super().selection(),
            "bank": self.cleaned_data["bank"],
            "check_all": self.cleaned_data["check_all"],
            "negatives": self.cleaned_data["negatives"],
        }
