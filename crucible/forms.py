from typing import cast

from django import forms

from assessor.jobs.forms import LaunchForm
from crucible.llm import CHUNKS, DOCUMENTS
from crucible.models import Variant
from nuggets.banks import bank_names


class CrucibleLaunchForm(LaunchForm):
    bank = forms.ChoiceField(
        help_text="The question bank the run is written from (any: PrefNugget, query-only, a person's)."
    )
    variant = forms.ChoiceField(choices=Variant.choices, initial=Variant.ABSTRACTIVE)
    length = forms.ChoiceField(
        choices=[("short", "short: each question's best sentence"), ("long", "long: each question's best five")],
        initial="short",
    )
    documents = forms.IntegerField(min_value=1, initial=DOCUMENTS, help_text="Documents retrieved per topic (BM25).")
    chunks = forms.IntegerField(min_value=1, initial=CHUNKS, help_text="Chunks read per topic, best document first.")

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.fields["name"].help_text = "The id of the run the job makes."
        cast(forms.ChoiceField, self.fields["bank"]).choices = [(name, name) for name in bank_names()]

    def selection(self) -> dict:
        data = self.cleaned_data
        return {
            **super().selection(),
            "bank": data["bank"],
            "variant": data["variant"],
            "length": data["length"],
            "documents": data["documents"],
            "chunks": data["chunks"],
        }
