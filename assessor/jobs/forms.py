"""The parts every job launch form shares (the apps add their own fields), and the launch itself."""

from typing import cast

from django import forms

from assessor.jobs.batch import batch_refusal, job_mode_set
from assessor.jobs.engine import JobRequestInvalid
from assessor.jobs.llm.endpoints import endpoints_list
from assessor.models import Job, LLMEndpoint
from assessor.names import NameField
from assessor.project.llm_endpoints import DEFAULT_ENDPOINT
from assessor.registry import registry

NAME_HELP = "The name of what the job produces; exports and the meta-evaluation accept it as a kind."


def _split(value: str) -> list[str]:
    return value.split()


def endpoint_choices() -> list[tuple[str, str]]:
    """The endpoints a job can use now, as "name: model at URL"."""
    return [
        (endpoint.name, f"{endpoint.name}: {endpoint.model} at {endpoint.base_url}")
        for endpoint in endpoints_list()
        if endpoint.usable
    ]


class LaunchForm(forms.Form):
    name = NameField(max_length=100, help_text=NAME_HELP)
    endpoint = forms.ChoiceField(
        required=False,
        help_text="The LLM endpoint the job's calls go to (its model, limit and prices); default when empty.",
    )
    topics = forms.CharField(required=False, help_text="Topic ids separated by spaces; all when empty.")
    batch = forms.BooleanField(required=False, label="Batch mode")
    batch_reasks = forms.ChoiceField(
        required=False,
        label="In batch mode, ask again an unusable answer",
        choices=[(Job.Mode.BATCH, "in the next round's batch"), (Job.Mode.LIVE, "at once, live")],
        initial=Job.Mode.BATCH,
    )

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        choices = endpoint_choices()
        cast(forms.ChoiceField, self.fields["endpoint"]).choices = choices
        names = [name for name, _ in choices]
        self.fields["endpoint"].initial = DEFAULT_ENDPOINT if DEFAULT_ENDPOINT in names else (names or [""])[0]
        batched = [endpoint.name for endpoint in endpoints_list() if endpoint.usable and endpoint.batch]
        if batched:
            self.fields["batch"].help_text = (
                "Send the calls through the provider's batch interface, at its batch price; the answers come "
                f"within its window (hours), in rounds. Endpoints offering it: {', '.join(batched)}."
            )
        else:
            # No endpoint offers it: nothing to choose.
            del self.fields["batch"], self.fields["batch_reasks"]

    def clean(self) -> dict:
        cleaned = super().clean() or {}
        if cleaned.get("batch") and (refusal := batch_refusal(cleaned.get("endpoint") or None)):
            self.add_error("batch", refusal)
        return cleaned

    def selection(self) -> dict:
        return {
            "name": self.cleaned_data["name"],
            "endpoint": self.cleaned_data["endpoint"] or None,
            "topics": _split(self.cleaned_data["topics"]) or None,
            "batch": bool(self.cleaned_data.get("batch")),
            "batch_reasks": self.cleaned_data.get("batch_reasks") or Job.Mode.BATCH,
        }


class RunsLaunchForm(LaunchForm):
    runs = forms.CharField(required=False, help_text="Run ids separated by spaces; all when empty.")

    def selection(self) -> dict:
        return {**super().selection(), "runs": _split(self.cleaned_data["runs"]) or None}


def job_launch(*, kind: str, selection: dict, user) -> Job:
    """Create the job of `kind` from its launch form's selection (raises JobRequestInvalid)."""
    create = registry.job_kind(kind).create
    if create is None:
        raise JobRequestInvalid(f"jobs of kind {kind!r} are not launched from a page")
    selection = dict(selection)
    batch, reasks = selection.pop("batch", False), selection.pop("batch_reasks", Job.Mode.BATCH)
    if batch and (refusal := batch_refusal(selection.get("endpoint"))):
        raise JobRequestInvalid(refusal)
    job = create(user=user, **selection)
    if batch:
        job_mode_set(job, mode=Job.Mode.BATCH, reasks=reasks)
    return job


class EndpointForm(forms.ModelForm):
    """An organizer's endpoint; the key is named, never typed in (it stays in the environment)."""

    base_url = forms.URLField(
        label="Base URL",
        required=False,
        max_length=500,
        assume_scheme="https",
        help_text=LLMEndpoint._meta.get_field("base_url").help_text,
    )
    # Empty: the usual discount of a batch, half price.
    batch_price_factor = forms.FloatField(
        required=False,
        min_value=0.0,
        help_text=LLMEndpoint._meta.get_field("batch_price_factor").help_text + " Empty: 0.5.",
    )

    class Meta:
        model = LLMEndpoint
        fields = [
            "name",
            "base_url",
            "api_key_env",
            "model",
            "api_version",
            "concurrency",
            "price_input",
            "price_output",
            "price_cached_input",
            "temperature",
            "timeout",
            "batch",
            "batch_price_factor",
        ]
        labels = {
            "api_key_env": "Key's environment variable",
            "api_version": "API version",
            "concurrency": "Calls at once",
            "price_input": "Input price",
            "price_output": "Output price",
            "price_cached_input": "Cached input price",
            "batch": "Batch interface",
            "batch_price_factor": "Batch price factor",
        }
        help_texts = {
            "api_key_env": "The NAME of the environment variable holding the key (not the key): LLM_KEY_... "
            "or one the administrator lists in LLM_KEY_VARIABLES.",
        }

    def endpoint_fields(self) -> dict:
        # An empty cached input price is left out: the endpoint charges cached tokens at the input price.
        return {field: value for field, value in self.cleaned_data.items() if field != "name" and value is not None}
