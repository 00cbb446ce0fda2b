"""What the meta-evaluation app adds to the shell (assessor.registry)."""

from django import forms

from assessor.collection.forms import run_id_field
from assessor.collection.score_formats import LAYOUTS
from assessor.names import NameField
from assessor.registry import (
    Importer,
    NavLink,
    register_deletable,
    register_importer,
    register_nav_link,
    register_stamp_listener,
    register_urls,
)
from metaeval.comparison_page import comparisons_warm_soon
from metaeval.deleting import SCORES_DELETABLE
from metaeval.importing import scores_import
from metaeval.kinds import IMPORT_SCORES


def _scores_name_field() -> forms.Field:
    return NameField(required=False, label="Score table name")


def _scores_layout_field() -> forms.Field:
    return forms.ChoiceField(
        choices=[(name, f"{name}: {columns}") for name, columns in LAYOUTS.items()],
        initial="tsv",
        required=False,
        label="Score table layout",
    )


def _scores_options(data: dict) -> dict:
    return {
        "name": data["scores_name"],
        "layout": data.get("scores_layout") or "tsv",
        "run_id": data.get("run_id") or None,
    }


def register() -> None:
    register_urls("metaeval/", "metaeval.urls")
    register_importer(
        Importer(
            IMPORT_SCORES,
            "Score table (export_scores TSV, tot, ir_measures or trec_eval)",
            scores_import,
            fields={"scores_name": _scores_name_field, "scores_layout": _scores_layout_field, "run_id": run_id_field},
            required=("scores_name",),
            options=_scores_options,
        )
    )
    register_deletable(SCORES_DELETABLE)
    register_stamp_listener(comparisons_warm_soon)
    register_nav_link(NavLink("Meta-evaluation", "compare conditions: tau, agreement", "metaeval:index", 70))
