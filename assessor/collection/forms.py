"""The upload form: a kind of file, the file, and the options that kind needs.

The kinds, their options and the service each one calls come from the apps
(`assessor.registry.Importer`); the collection's own kinds are registered
in `assessor.collection.importers`.
"""

from collections import defaultdict
from typing import Any

from django import forms
from django.core.exceptions import ValidationError

from assessor.importing.base import MAX_ID_CHARS, id_problem
from assessor.registry import Importer, registry


def run_id_check(value: str) -> None:
    """A run id typed on the form, under the rule of the ids read from files."""
    if problem := id_problem(value, MAX_ID_CHARS):
        raise ValidationError(problem)


def run_id_field() -> forms.Field:
    """The run of a file of one run's rows that does not name it (several kinds of file share this field)."""
    return forms.CharField(
        required=False,
        max_length=MAX_ID_CHARS,
        label="Run id",
        help_text="For a file of one run's rows without run ids (trec_eval -q output, a nuggetizer file).",
        validators=[run_id_check],
    )


def options_title(kinds: tuple[str, ...]) -> str:
    """ "Options for nuggets and nugget assignments": the kinds as their labels say them, without the format."""
    names = [registry.importers[kind].label.split(" (", 1)[0].lower() for kind in kinds]
    listed = names[0] if len(names) == 1 else ", ".join(names[:-1]) + " and " + names[-1]
    return f"Options for {listed}"


def _kind_choices() -> list[tuple[str, str]]:
    return [(kind, importer.label) for kind, importer in registry.importers.items()]


class UploadForm(forms.Form):
    kind = forms.ChoiceField(choices=_kind_choices, label="Kind of file")
    file = forms.FileField()
    replace = forms.BooleanField(
        required=False, help_text="Overwrite stored rows the file contradicts (otherwise a contradiction is an error)."
    )

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        for importer in registry.importers.values():
            for name, make_field in importer.fields.items():
                if name not in self.fields:
                    self.fields[name] = make_field()

    def option_groups(self) -> list[tuple[str, str, list]]:
        """(kinds, title, fields): the options grouped by the kinds that read them (a shared field is shown once)."""
        kinds_of: dict[str, list[str]] = defaultdict(list)
        for kind, importer in registry.importers.items():
            for name in importer.fields:
                kinds_of[name].append(kind)
        groups: dict[tuple[str, ...], list] = {}
        for name, kinds in kinds_of.items():
            groups.setdefault(tuple(kinds), []).append(self[name])
        return [(" ".join(kinds), options_title(kinds), fields) for kinds, fields in groups.items()]

    def _importer(self) -> Importer:
        return registry.importer(self.cleaned_data["kind"])

    def clean(self) -> dict:
        data = super().clean()
        assert data is not None  # Form.clean returns cleaned_data
        kind = data.get("kind")
        if not kind:
            return data
        for name in registry.importer(kind).required:
            if not data.get(name):
                self.add_error(name, f"Required for {kind}.")
        return data

    def upload_options(self) -> dict[str, Any]:
        """What was chosen for the chosen kind (replace and its own fields), as the upload records it."""
        data = self.cleaned_data
        return {"replace": data["replace"], **{name: data.get(name) for name in self._importer().fields}}

    def importer_kwargs(self) -> dict:
        """The keyword arguments of the service function, from the options of the chosen kind."""
        return self._importer().arguments(self.upload_options())
