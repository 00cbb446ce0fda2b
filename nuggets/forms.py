from django import forms
from django.contrib.auth.models import User

from assessor.models import Topic
from assessor.roles import Role
from nuggets.models import NuggetSet


class GiveWorkForm(forms.Form):
    topic = forms.ModelChoiceField(queryset=Topic.objects.order_by("id"), to_field_name="id")
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


class ReopenForm(forms.Form):
    reason = forms.CharField(required=False, max_length=500)
