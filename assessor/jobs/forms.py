"""The launch forms of the four jobs: the same selection flags as the commands."""

from django import forms

from assessor.models import Job, QrelSource

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


class AutoAssignForm(RunsLaunchForm):
    nuggets = forms.ChoiceField(help_text="The nugget set (any kind) whose nuggets are labelled.")

    def __init__(self, *args, **kwargs):
        from nuggets.models import NuggetSet

        super().__init__(*args, **kwargs)
        names = NuggetSet.objects.order_by("name").values_list("name", flat=True).distinct()
        self.fields["nuggets"].choices = [(name, name) for name in names]

    def selection(self) -> dict:
        return {**super().selection(), "nuggets": self.cleaned_data["nuggets"]}


LAUNCH_FORMS: dict[str, type[LaunchForm]] = {
    Job.Kind.AUTO_NUGGETS: AutoNuggetsForm,
    Job.Kind.AUTO_ASSIGN: AutoAssignForm,
    Job.Kind.AUTO_SUPPORT: RunsLaunchForm,
    Job.Kind.UMBRELA: RunsLaunchForm,
}


def job_launch(*, kind: str, selection: dict, user) -> Job:
    """Create the job of `kind` from a form's selection (raises JobRequestInvalid)."""
    if kind == Job.Kind.AUTO_NUGGETS:
        from nuggets.auto import auto_nuggets_job_create

        return auto_nuggets_job_create(user=user, **selection)
    if kind == Job.Kind.AUTO_ASSIGN:
        from assignment.auto import auto_assign_job_create

        return auto_assign_job_create(user=user, **selection)
    if kind == Job.Kind.AUTO_SUPPORT:
        from support.auto import auto_support_job_create

        return auto_support_job_create(user=user, **selection)
    from assessor.umbrela import umbrela_job_create

    return umbrela_job_create(user=user, **selection)
