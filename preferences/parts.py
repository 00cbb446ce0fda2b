"""What the preferences app adds to the registry: its label family, PrefNugget's preference job, and the
people's preference judging (its pages, how it is given, its progress)."""

from functools import partial
from urllib.parse import urlencode

from django import forms
from django.urls import reverse

from assessor.models import Job
from assessor.names import NameField
from assessor.registry import (
    WORK_GROUP,
    AnswerPanel,
    Download,
    Importer,
    JobKind,
    LabelFamily,
    NavLink,
    Route,
    ScoreFamily,
    ScoreRefresh,
    ScoreSource,
    WorkPage,
    register_answer_panel,
    register_collection_routes,
    register_fake_answer,
    register_importer,
    register_job_kind,
    register_label_family,
    register_nav_link,
    register_score_family,
    register_urls,
    register_work_page,
)
from preferences import answer_panel, judging, llm, scoring, views
from preferences.checkpoint import preferences_import
from preferences.fake_answers import FAKE_ANSWERS
from preferences.forms import PreferencesLaunchForm
from preferences.kinds import IMPORT_PREFERENCES, PREFERENCE_WORK, PREFERENCES, PREFERENCES_FAMILY
from preferences.prompts import PREFERENCE_MUST_DECIDE, PREFERENCE_TIES


def _score_source(columns: tuple[str, ...]) -> ScoreSource:
    (name,) = columns
    return ScoreSource(
        key=name,
        title=f"{name} preferences",
        columns=columns,
        scores=partial(scoring.borda_scores, name=name),
        leaderboard_url=f"{reverse('collection:borda_leaderboard')}?{urlencode({'source': name})}",
        leaderboard_label="runs by Borda count",
        downloads=(Download("scores", reverse("collection:download_borda_scores", args=[name])),),
        notes=lambda: scoring.notes([columns])[columns],
    )


def _source_name_field() -> forms.Field:
    return NameField(
        required=False, label="Preference source", help_text="The name the file's preferences are kept under."
    )


def _borda_board_url(job: Job) -> str:
    """What a preferences job made: its preference source's Borda leaderboard."""
    return _score_source((job.output_name,)).leaderboard_url


def _register_job_kind() -> None:
    register_job_kind(
        JobKind(
            kind=PREFERENCES,
            label="Preferences (PrefNugget)",
            command="run_preferences",
            description="An LLM says which of two reports on a topic is better, for PrefNugget's sampled pairs.",
            compute=llm.item_compute,
            store=llm.item_store,
            create=llm.preferences_job_create,
            form=PreferencesLaunchForm,
            prompts=(PREFERENCE_TIES, PREFERENCE_MUST_DECIDE),
            output_url=_borda_board_url,
        )
    )


def _register_work_page() -> None:
    register_work_page(
        WorkPage(
            kind=PREFERENCE_WORK,
            label="Preference judging",
            description="The assessor says, pair by pair, which of two reports answers the request better.",
            url_name="preferences:judge",
            give=judging.preference_work_give,
            stage=3,
            progress=judging.preference_progress,
            unit="pairs",
        )
    )


def _register_importer() -> None:
    register_importer(
        Importer(
            IMPORT_PREFERENCES,
            "Preferences (PrefNugget checkpoint JSONL)",
            preferences_import,
            scores=ScoreRefresh.TOUCHED,
            fields={"preference_source": _source_name_field},
            required=("preference_source",),
            options=lambda data: {"name": data["preference_source"]},
        )
    )


def _register_score_family() -> None:
    register_score_family(
        ScoreFamily(
            name=scoring.SCORE_FAMILY,
            title="Preferences (Borda)",
            headers=("Preference source",),
            source=_score_source,
            listed=scoring.listed,
            compute=scoring.compute,
            job_scope=scoring.job_scope,
            work_scope=scoring.work_scope,
            empty="No preference source has preferences yet.",
            order=80,
            notes=scoring.notes,
            crosstab=scoring.crosstab,
        )
    )


def register() -> None:
    register_fake_answer(*FAKE_ANSWERS)
    register_label_family(LabelFamily(PREFERENCES_FAMILY, "preference source"))
    _register_job_kind()
    register_urls("preferences/", "preferences.urls")
    _register_work_page()
    register_nav_link(
        NavLink(
            "Preferences",
            "give pairs of reports to compare to assessors, follow it",
            "preferences:organize",
            58,
            WORK_GROUP,
        )
    )
    _register_importer()
    register_collection_routes(
        Route("leaderboards/borda/", views.leaderboard, "borda_leaderboard"),
        Route("download/borda-scores/<slug:name>/", views.download_scores, "download_borda_scores"),
    )
    _register_score_family()
    register_answer_panel(
        AnswerPanel("Preferences", "preferences/answer_panel.html", answer_panel.answer_panel_context, order=40)
    )
