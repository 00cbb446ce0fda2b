"""The AutoAssign launch form: the same selection flags as `run_auto_assign`."""

from typing import cast

from django import forms

from assessor.jobs.forms import RunsLaunchForm
from nuggets.models import NuggetSet


class AutoAssignForm(RunsLaunchForm):
    nuggets = forms.ChoiceField(help_text="The nugget set (any kind) whose nuggets are labelled.")

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        # Fact nuggets only: question banks are the report family's.
        facts = NuggetSet.objects.filter(form=NuggetSet.Form.FACTS)
        names = facts.order_by("name").values_list("name", flat=True).distinct()
        cast(forms.ChoiceField, self.fields["nuggets"]).choices = [(name, name) for name in names]

    def selection(self) -> dict:
        return {**super().selection(), "nuggets": self.cleaned_data["nuggets"]}
