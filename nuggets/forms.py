from django import forms
from django.contrib.auth.models import User

from assessor.jobs.forms import LaunchForm
from assessor.models import QrelSource, Topic
from assessor.work.roles import Role
from nuggets.models import NuggetSet


class GiveWorkForm(forms.Form):
    topics = forms.CharField(
        widget=forms.Textarea(attrs={"rows": 3}),
        help_text="One or more topic ids, separated by spaces, commas or lines.",
    )
    assessor = forms.ModelChoiceField(
        queryset=User.objects.filter(groups__name=Role.ASSESSOR.value, is_superuser=False).order_by("username")
    )
    condition = forms.ChoiceField(
        choices=[(NuggetSet.Kind.MANUAL, "ManualNuggets"), (NuggetSet.Kind.AUTO_EDIT, "AutoNuggets+Edits")]
    )
    name = forms.SlugField(
        required=False, max_length=100, help_text="Name of the nugget set; defaults to the condition."
    )
    drafts = forms.SlugField(
        required=False, max_length=100, help_text="Post-editing: the draft set to start from; defaults to the newest."
    )


    def clean_topics(self) -> list[Topic]:
        wanted = list(dict.fromkeys(self.cleaned_data["topics"].replace(",", " ").split()))
        found = Topic.objects.in_bulk(wanted)
        unknown = [topic_id for topic_id in wanted if topic_id not in found]
        if unknown:
            raise forms.ValidationError(f"Unknown topic(s): {', '.join(unknown)}.")
        return [found[topic_id] for topic_id in wanted]


class ReopenForm(forms.Form):
    reason = forms.CharField(required=False, max_length=500)


class AutoNuggetsForm(LaunchForm):
    qrels = forms.ChoiceField(help_text="The source whose segments graded >= 1 are read (umbrela for the fully automatic condition).")
    drafts = forms.BooleanField(
        required=False, help_text="Stop after creation: 30 drafts without importance, for AutoNuggets+Edits."
    )

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        names = list(QrelSource.objects.values_list("name", flat=True))
        self.fields["qrels"].choices = [(name, name) for name in names]
        if "nist" in names:
            self.fields["qrels"].initial = "nist"

    def selection(self) -> dict:
        return {**super().selection(), "qrels": self.cleaned_data["qrels"], "drafts": self.cleaned_data["drafts"]}
