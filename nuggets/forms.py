from django import forms
from django.contrib.auth.models import User

from assessor.models import Topic
from assessor.roles import Role
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
