from typing import cast

from django import forms

from assessor.jobs.forms import LaunchForm
from assessor.models import LabelSource
from preferences.kinds import PREFERENCES_FAMILY


class PrefNuggetLaunchForm(LaunchForm):
    preferences = forms.ChoiceField(
        label="Preference source",
        help_text="The preference source whose counted preferences give the (winner, loser) pairs: an LLM's, "
        "people's or a file's.",
    )

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        names = LabelSource.objects.filter(family=PREFERENCES_FAMILY).order_by("name").values_list("name", flat=True)
        cast(forms.ChoiceField, self.fields["preferences"]).choices = [(name, name) for name in names]

    def selection(self) -> dict:
        return {**super().selection(), "preferences": self.cleaned_data["preferences"]}


class QueryBankLaunchForm(LaunchForm):
    pass
