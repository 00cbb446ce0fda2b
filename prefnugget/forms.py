from django import forms

from assessor.jobs.forms import LaunchForm


class PrefNuggetLaunchForm(LaunchForm):
    preferences = forms.SlugField(
        max_length=100,
        label="Preference source",
        help_text="The preference source whose counted preferences give the (winner, loser) pairs: an LLM's, "
        "people's or a file's.",
    )

    def selection(self) -> dict:
        return {**super().selection(), "preferences": self.cleaned_data["preferences"]}


class QueryBankLaunchForm(LaunchForm):
    pass
