"""The parts every job launch form shares (the apps add their own fields), and the launch itself."""

from django import forms

from assessor.jobs.engine import JobRequestInvalid
from assessor.models import Job
from assessor.registry import registry

NAME_HELP = "The name of what the job produces; exports and the meta-evaluation accept it as a kind."


def _split(value: str) -> list[str]:
    return value.split()


class LaunchForm(forms.Form):
    name = forms.SlugField(max_length=100, help_text=NAME_HELP)
    topics = forms.CharField(required=False, help_text="Topic ids separated by spaces; all when empty.")

    def selection(self) -> dict:
        return {"name": self.cleaned_data["name"], "topics": _split(self.cleaned_data["topics"]) or None}


class RunsLaunchForm(LaunchForm):
    runs = forms.CharField(required=False, help_text="Run ids separated by spaces; all when empty.")

    def selection(self) -> dict:
        return {**super().selection(), "runs": _split(self.cleaned_data["runs"]) or None}


def job_launch(*, kind: str, selection: dict, user) -> Job:
    """Create the job of `kind` from its launch form's selection (raises JobRequestInvalid)."""
    create = registry.job_kind(kind).create
    if create is None:
        raise JobRequestInvalid(f"jobs of kind {kind!r} are not launched from a page")
    return create(user=user, **selection)
