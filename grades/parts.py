"""What the grades app adds to the registry: its label family, PrefNugget's grading job, the grade scores
(leaderboard, download, the meta-evaluation's sources and their crosstab) and the people's grading pages."""

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
from grades import answer_panel, dependents, judging, llm, scoring, views
from grades.fake_answers import FAKE_ANSWERS
from grades.files import grades_import
from grades.forms import GradesLaunchForm
from grades.kinds import GRADE_WORK, GRADES, GRADES_FAMILY, IMPORT_GRADES
from grades.prompts import GRADE
from nuggets.banks import bank_names
from nuggets.dependents import NuggetDependents, register_nugget_dependents


def _score_source(columns: tuple[str, ...]) -> ScoreSource:
    (name,) = columns
    return ScoreSource(
        key=name,
        title=f"{name} grades",
        columns=columns,
        scores=partial(scoring.grade_scores, name=name),
        leaderboard_url=f"{reverse('collection:grade_leaderboard')}?{urlencode({'source': name})}",
        leaderboard_label="runs by grades",
        downloads=(Download("scores", reverse("collection:download_grade_scores", args=[name])),),
        notes=lambda: scoring.notes([columns])[columns],
    )


def _source_name_field() -> forms.Field:
    return NameField(required=False, label="Grade source", help_text="The name the file's grades are kept under.")


def _bank_field() -> forms.Field:
    return forms.ChoiceField(
        required=False,
        label="Question bank",
        choices=lambda: [("", "")] + [(name, name) for name in bank_names()],
        help_text="The bank whose questions the file grades.",
    )


def _grade_board_url(job: Job) -> str:
    """What a grading job made: its grade source's leaderboard."""
    return _score_source((job.output_name,)).leaderboard_url


def _register_job_kind() -> None:
    register_job_kind(
        JobKind(
            kind=GRADES,
            label="Grades (PrefNugget)",
            command="run_grades --bank BANK",
            description="An LLM grades every report of a topic 0-5 on every question of a chosen bank.",
            compute=llm.item_compute,
            store=llm.item_store,
            create=llm.grades_job_create,
            form=GradesLaunchForm,
            prompts=(GRADE,),
            output_url=_grade_board_url,
        )
    )


def _register_importer() -> None:
    register_importer(
        Importer(
            IMPORT_GRADES,
            "Grades (PrefNugget nugget-grades JSONL)",
            grades_import,
            scores=ScoreRefresh.TOUCHED,
            fields={"grade_source": _source_name_field, "grade_bank": _bank_field},
            required=("grade_source", "grade_bank"),
            options=lambda data: {"name": data["grade_source"], "bank": data["grade_bank"]},
        )
    )


def _register_work_page() -> None:
    register_work_page(
        WorkPage(
            kind=GRADE_WORK,
            label="Grading",
            description="The assessor grades each report of a topic 0-5 on every question of its bank.",
            url_name="grades:judge",
            give=judging.grade_work_give,
            stage=4,
            progress=judging.grade_progress,
            unit="grades",
        )
    )


def _register_score_family() -> None:
    register_score_family(
        ScoreFamily(
            name=scoring.SCORE_FAMILY,
            title="Grades (0-5 on a bank's questions)",
            headers=("Grade source",),
            source=_score_source,
            listed=scoring.listed,
            compute=scoring.compute,
            job_scope=scoring.job_scope,
            work_scope=scoring.work_scope,
            empty="No grade source has grades yet.",
            order=85,
            notes=scoring.notes,
            crosstab=scoring.crosstab,
        )
    )


def register() -> None:
    register_fake_answer(*FAKE_ANSWERS)
    register_nugget_dependents(
        NuggetDependents(
            name="grades",
            describe=dependents.grades_describe,
            retire=dependents.grades_retire,
            changed=dependents.bank_changed,
        )
    )
    register_label_family(LabelFamily(GRADES_FAMILY, "grade source"))
    _register_job_kind()
    _register_importer()
    register_urls("grades/", "grades.urls")
    register_nav_link(
        NavLink(
            "Grading", "give reports to grade on a bank's questions (0-5), follow it", "grades:organize", 59, WORK_GROUP
        )
    )
    _register_work_page()
    register_collection_routes(
        Route("leaderboards/grades/", views.leaderboard, "grade_leaderboard"),
        Route("download/grade-scores/<slug:name>/", views.download_scores, "download_grade_scores"),
    )
    _register_score_family()
    register_answer_panel(
        AnswerPanel("Grades", "grades/answer_panel.html", answer_panel.answer_panel_context, order=30)
    )
