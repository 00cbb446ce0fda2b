"""What the meta-evaluation app adds to the shell (assessor.registry)."""

from django import forms

from assessor.registry import Importer, NavLink, register_importer, register_nav_link, register_urls
from metaeval.importing import scores_import


def _scores_name_field() -> forms.Field:
    return forms.SlugField(required=False, label="Score table name")


def register() -> None:
    register_urls("metaeval/", "metaeval.urls")
    register_importer(
        Importer(
            "scores",
            "Score table (export_scores TSV)",
            scores_import,
            fields={"scores_name": _scores_name_field},
            required=("scores_name",),
            options=lambda data: {"name": data["scores_name"]},
        )
    )
    register_nav_link(NavLink("Meta-evaluation", "compare conditions: tau, agreement", "metaeval:index", 70))
