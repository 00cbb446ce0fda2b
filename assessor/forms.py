"""The upload form: a kind of file, the file, and the options that kind needs."""

from collections.abc import Callable
from dataclasses import dataclass
from importlib import import_module

from django import forms

from assessor.importing.base import ImportResult
from assignment.models import AssignmentLabel
from nuggets.models import NuggetSet
from support.models import SupportLabel


@dataclass(frozen=True)
class Importer:
    label: str
    module: str
    function: str
    required: tuple[str, ...] = ()  # the options this kind cannot do without

    def load(self) -> Callable[..., ImportResult] | None:
        """The service function, or None while its part of the project is not there."""
        try:
            return getattr(import_module(self.module), self.function)
        except (ImportError, AttributeError):
            return None


# The same service functions the import_* commands call.
IMPORTERS: dict[str, Importer] = {
    "topics": Importer("Topics (topic_id<TAB>query)", "assessor.importing.topics", "topics_import"),
    "segments": Importer("Segments (JSONL docid, segment)", "assessor.importing.segments", "segments_import"),
    "qrels": Importer("Qrels (TREC qrels)", "assessor.importing.qrels", "qrels_import", ("source",)),
    "run": Importer("Run (TREC RAG 2024 run format)", "assessor.importing.runs", "run_import"),
    "nuggets": Importer("Nuggets (nuggetizer JSONL)", "nuggets.importing", "nuggets_import", ("nuggets_kind",)),
    "assignments": Importer(
        "Nugget assignments (JSONL)", "assignment.importing", "assignments_import", ("nuggets_kind", "assigner_kind")
    ),
    "support": Importer("Support judgments (JSONL)", "support.importing", "support_import", ("method_kind",)),
    "scores": Importer("Score table (export_scores TSV)", "metaeval.importing", "scores_import", ("scores_name",)),
}


def _kind_choices() -> list[tuple[str, str]]:
    return [
        (kind, importer.label if importer.load() else f"{importer.label}: not available")
        for kind, importer in IMPORTERS.items()
    ]


class UploadForm(forms.Form):
    kind = forms.ChoiceField(choices=_kind_choices, label="Kind of file")
    file = forms.FileField()
    replace = forms.BooleanField(
        required=False, help_text="Overwrite stored rows the file contradicts (otherwise a contradiction is an error)."
    )
    source = forms.SlugField(required=False, label="Qrels source", help_text="nist, umbrela, or any name.")
    nuggets_kind = forms.ChoiceField(
        choices=NuggetSet.Kind.choices, initial=NuggetSet.Kind.AUTO_EDIT, required=False, label="Nugget kind"
    )
    nuggets_name = forms.SlugField(
        required=False, label="Nugget set name", help_text="Defaults to the kind."
    )
    assigner_kind = forms.ChoiceField(
        choices=AssignmentLabel.AssignerKind.choices, initial=AssignmentLabel.AssignerKind.MANUAL, required=False
    )
    assigner_name = forms.SlugField(required=False, help_text="Defaults to the kind.")
    method_kind = forms.ChoiceField(
        choices=SupportLabel.MethodKind.choices,
        initial=SupportLabel.MethodKind.SCRATCH,
        required=False,
        label="Support method kind",
    )
    method_name = forms.SlugField(required=False, label="Support method name", help_text="Defaults to the kind.")
    scores_name = forms.SlugField(required=False, label="Score table name")

    # Which options belong to which kinds, for the template to group them.
    OPTION_GROUPS = {
        "qrels": ("source",),
        "nuggets assignments": ("nuggets_kind", "nuggets_name"),
        "assignments": ("assigner_kind", "assigner_name"),
        "support": ("method_kind", "method_name"),
        "scores": ("scores_name",),
    }

    def option_groups(self) -> list[tuple[str, list]]:
        return [(kinds, [self[name] for name in names]) for kinds, names in self.OPTION_GROUPS.items()]

    def clean(self) -> dict:
        data = super().clean()
        kind = data.get("kind")
        if not kind:
            return data
        importer = IMPORTERS[kind]
        if importer.load() is None:
            raise forms.ValidationError(f"Importing {kind} is not available yet in this installation.")
        for name in importer.required:
            if not data.get(name):
                self.add_error(name, f"Required for {kind}.")
        return data

    def importer(self) -> Callable[..., ImportResult]:
        return IMPORTERS[self.cleaned_data["kind"]].load()

    def importer_kwargs(self) -> dict:
        """The keyword arguments of the service function, from the options of the chosen kind."""
        data = self.cleaned_data
        kind = data["kind"]
        kwargs: dict = {"replace": data["replace"]}
        if kind == "qrels":
            kwargs["source"] = data["source"]
        elif kind == "nuggets":
            kwargs["kind"] = data["nuggets_kind"]
            kwargs["name"] = data["nuggets_name"] or None
        elif kind == "assignments":
            kwargs["nuggets"] = data["nuggets_kind"]
            kwargs["assigner"] = data["assigner_kind"]
            kwargs["nuggets_name"] = data["nuggets_name"] or None
            kwargs["assigner_name"] = data["assigner_name"] or None
        elif kind == "support":
            kwargs["method"] = data["method_kind"]
            kwargs["method_name"] = data["method_name"] or None
        elif kind == "scores":
            kwargs["name"] = data["scores_name"]
        return kwargs
