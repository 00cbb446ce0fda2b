"""What the ARGUE-style app adds to the registry: its label family, the scores of its sources with their
leaderboard and downloads."""

from functools import partial
from urllib.parse import urlencode

from django import forms
from django.urls import reverse

from argue import agreement, answer_panel, judging, llm, report_views, scoring, study, views
from argue.fake_answers import FAKE_ANSWERS
from argue.files import argue_import
from argue.forms import ArgueLaunchForm
from argue.kinds import ARGUE, ARGUE_FAMILY, ARGUE_WORK, IMPORT_ARGUE, SCORE_FAMILY
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
    RunPanel,
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
    register_run_panel,
    register_score_family,
    register_urls,
    register_work_page,
)
from nuggets.banks import bank_names


def _score_source(columns: tuple[str, ...]) -> ScoreSource:
    (name,) = columns
    return ScoreSource(
        key=name,
        title=f"{name} ARGUE-style judgments",
        columns=columns,
        scores=partial(scoring.argue_scores, name=name),
        leaderboard_url=f"{reverse('collection:argue_leaderboard')}?{urlencode({'source': name})}",
        leaderboard_label="runs by ARGUE-style F1",
        downloads=(
            Download("scores", reverse("collection:download_argue_scores", args=[name])),
            Download("judgments", reverse("collection:download_argue_judgments", args=[name])),
        ),
        notes=lambda: scoring.notes([columns])[columns],
    )


def _argue_board_url(job: Job) -> str:
    """What an ARGUE-style job made: its source's leaderboard."""
    return _score_source((job.output_name,)).leaderboard_url


def _register_job_kind() -> None:
    register_job_kind(
        JobKind(
            kind=ARGUE,
            label="ARGUE-style judgments",
            command="run_argue",
            description=(
                "An LLM says yes or no, sentence by sentence of each report cut to its limit: does each cited "
                "document support it, does it agree with the bank's gold answers; of a sentence citing nothing, "
                "does it need a citation, is it the first instance of its claim."
            ),
            compute=llm.item_compute,
            store=llm.item_store,
            create=llm.argue_job_create,
            form=ArgueLaunchForm,
            prompts=llm.PROMPTS,
            output_url=_argue_board_url,
        )
    )


def _register_nav_link() -> None:
    register_nav_link(
        NavLink(
            "ARGUE-style judging",
            "give reports to judge sentence by sentence (yes/no), follow it",
            "argue:organize",
            59,
            WORK_GROUP,
        )
    )


def _register_work_page() -> None:
    register_work_page(
        WorkPage(
            kind=ARGUE_WORK,
            label="ARGUE-style judging",
            description=(
                "The assessor judges each report sentence by sentence: does each cited document support it, "
                "does it give the bank's gold answers (yes/no)."
            ),
            url_name="argue:judge",
            give=judging.argue_work_give,
            stage=3,
            progress=judging.argue_progress,
            unit="questions",
        )
    )


def _register_score_family() -> None:
    register_score_family(
        ScoreFamily(
            name=SCORE_FAMILY,
            title="ARGUE-style (citations and gold answers)",
            headers=("ARGUE-style source",),
            source=_score_source,
            listed=scoring.listed,
            compute=scoring.compute,
            job_scope=scoring.job_scope,
            work_scope=scoring.work_scope,
            empty="No ARGUE-style source has judgments yet.",
            order=85,
            notes=scoring.notes,
            crosstab=agreement.crosstab,
            support_crosstab=agreement.support_crosstab,
        )
    )


def _source_name_field() -> forms.Field:
    return NameField(
        required=False, label="ARGUE-style source", max_length=100, help_text="The source the judgments go into."
    )


def _bank_field() -> forms.Field:
    return forms.ChoiceField(
        required=False,
        label="Question bank",
        choices=lambda: [("", "")] + [(name, name) for name in bank_names()],
        help_text="The bank whose questions and gold answers the file judges.",
    )


def _register_importer() -> None:
    register_importer(
        Importer(
            IMPORT_ARGUE,
            "ARGUE-style judgments (export_argue JSONL)",
            argue_import,
            scores=ScoreRefresh.TOUCHED,
            fields={"argue_source": _source_name_field, "argue_bank": _bank_field},
            required=("argue_source", "argue_bank"),
            options=lambda data: {"name": data["argue_source"], "bank": data["argue_bank"]},
        )
    )


def register() -> None:
    register_fake_answer(*FAKE_ANSWERS)
    register_label_family(
        LabelFamily(
            ARGUE_FAMILY,
            "ARGUE-style source",
            item_labels=agreement.item_labels,
            labels=agreement.YES_NO,
            study=study.STUDY,
        )
    )
    _register_job_kind()
    _register_importer()
    register_urls("argue/", "argue.urls")
    _register_nav_link()
    _register_work_page()
    register_collection_routes(
        Route("leaderboards/argue/", views.leaderboard, "argue_leaderboard"),
        Route("download/argue-scores/<slug:name>/", views.download_scores, "download_argue_scores"),
        Route("download/argue/<slug:name>/", views.download_judgments, "download_argue_judgments"),
    )
    _register_score_family()
    # A run's page lists the reports each source judged, each a link to its page sentence by sentence.
    register_run_panel(RunPanel("argue/run_panel.html", report_views.run_panel_context, order=30))
    register_answer_panel(
        AnswerPanel("ARGUE-style judgments", "argue/answer_panel.html", answer_panel.answer_panel_context, order=50)
    )
