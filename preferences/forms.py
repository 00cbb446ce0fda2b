from django import forms

from assessor.jobs.forms import RunsLaunchForm


class PreferencesLaunchForm(RunsLaunchForm):
    must_decide = forms.BooleanField(
        required=False, help_text="The must-decide prompt: 1 or 2, no ties (ties are allowed by default)."
    )

    def selection(self) -> dict:
        return {**super().selection(), "must_decide": self.cleaned_data["must_decide"]}
