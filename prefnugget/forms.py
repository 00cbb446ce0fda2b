from typing import cast

from django import forms

from assessor.jobs.forms import LaunchForm
from assessor.models import LabelSource
from preferences.kinds import PREFERENCES_FAMILY
from prefnugget.contrastive import MAX_PAIRS


class PrefNuggetLaunchForm(LaunchForm):
    preferences = forms.ChoiceField(
        label="Preference source",
        required=False,
        help_text="The preference source whose counted preferences give the (winner, loser) pairs: an LLM's, "
        "people's or a file's. Empty with random pairs.",
    )
    random_pairs = forms.BooleanField(
        label="Random pairs",
        required=False,
        help_text="Instead of a preference source, every pair of a topic's reports in a shuffled order, the "
        'earlier shown as the winner (the reference\'s variant "random", its null hypothesis).',
    )
    seed = forms.CharField(
        required=False,
        max_length=100,
        help_text="With random pairs: the seed of the shuffle; empty for the reference's own (each topic's id).",
    )
    max_pairs = forms.IntegerField(
        label="Pairs a topic",
        required=False,
        min_value=1,
        help_text=f"The most (winner, loser) pairs a topic's questions are asked from; {MAX_PAIRS} when empty, "
        "as the reference.",
    )

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        names = LabelSource.objects.filter(family=PREFERENCES_FAMILY).order_by("name").values_list("name", flat=True)
        choices = [("", "(none: random pairs)")] + [(name, name) for name in names]
        cast(forms.ChoiceField, self.fields["preferences"]).choices = choices

    def selection(self) -> dict:
        return {
            **super().selection(),
            "preferences": self.cleaned_data["preferences"],
            "random_pairs": self.cleaned_data["random_pairs"],
            "seed": self.cleaned_data["seed"],
            "max_pairs": self.cleaned_data["max_pairs"],
        }


class QueryBankLaunchForm(LaunchForm):
    pass
