"""What the verdicts app adds to the registry: every part of a judge and of a kind of human work.

The same steps as docs/architecture.md, "Adding a judge" and "Adding a kind of human work".
"""

from functools import partial
from urllib.parse import urlencode

from django import forms
from django.urls import reverse

from assessor.jobs.forms import RunsLaunchForm
from assessor.jobs.llm.fake_rules import line_after, long_words
from assessor.names import NameField
from assessor.registry import (
    Download,
    FakeAnswer,
    Importer,
    JobKind,
    LabelFamily,
    Route,
    ScoreFamily,
    ScoreRefresh,
    ScoreSource,
    WorkPage,
    register_collection_routes,
    register_fake_answer,
    register_importer,
    register_job_kind,
    register_label_family,
    register_score_family,
    register_urls,
    register_work_page,
)
from tests.verdicts import judge, scoring, views, work
from tests.verdicts.importing import verdicts_import
from tests.verdicts.kinds import IMPORT_VERDICTS, LABEL_FAMILY, SCORE_FAMILY, VERDICT_JOB, VERDICT_WORK
from tests.verdicts.prompts import VERDICT


def _source_name_field() -> forms.Field:
    return NameField(required=False, label="Verdict source", help_text="The name the verdicts are stored under.")


def _score_source(columns: tuple[str, ...]) -> ScoreSource:
    (name,) = columns
    return ScoreSource(
        key=name,
        title=f"{name} verdicts",
        columns=columns,
        scores=partial(scoring.verdict_scores, name=name),
        leaderboard_url=f"{reverse('collection:verdict_leaderboard')}?{urlencode({'source': name})}",
        leaderboard_label="runs by share of yes",
        downloads=(
            Download("scores", reverse("collection:download_verdict_scores", args=[name])),
            Download("verdicts", reverse("collection:download_verdicts", args=[name])),
        ),
        notes=lambda: scoring.notes([columns])[columns],
    )


def _fake_verdict(user: str) -> str:
    """The fake LLM server's verdict: yes when the answer shares a word of four letters or more with the question."""
    return "yes" if long_words(line_after(user, "Question: ")) & long_words(line_after(user, "Answer: ")) else "no"


def register() -> None:
    # 1. The kinds, with what people read.
    register_label_family(LabelFamily(LABEL_FAMILY, "verdict source"))
    # 2. The judge: an LLM job launched from the jobs page or `run_answer_verdict`.
    register_job_kind(
        JobKind(
            kind=VERDICT_JOB,
            label="Answer verdicts",
            command="run_answer_verdict",
            description="An LLM says, answer by answer, whether the answer answers its topic's question.",
            compute=judge.item_compute,
            store=judge.item_store,
            create=judge.verdict_job_create,
            form=RunsLaunchForm,
            prompts=(VERDICT,),
        )
    )
    # How the fake LLM server (bench/fake_llm.py) answers the prompt, known by how its system message starts;
    # a server started with --flip says the opposite.
    register_fake_answer(
        FakeAnswer("You are YesNoJudgeLLM", _fake_verdict, flip=lambda answer: {"yes": "no", "no": "yes"}[answer])
    )
    # 3. The human work: its page, how it is given, and its progress in the assessor's queue.
    register_urls("verdicts/", "tests.verdicts.urls")
    register_work_page(
        WorkPage(
            kind=VERDICT_WORK,
            label="Answer verdicts",
            description="The assessor says, answer by answer, whether the answer answers the question.",
            url_name="verdicts:judge",
            give=work.verdict_work_give,
            stage=3,
            progress=work.verdict_progress,
            unit="answers",
        )
    )
    # 4. Files in and out.
    register_importer(
        Importer(
            IMPORT_VERDICTS,
            "Answer verdicts (JSONL)",
            verdicts_import,
            scores=ScoreRefresh.TOUCHED,
            fields={"verdict_source": _source_name_field},
            required=("verdict_source",),
            options=lambda data: {"name": data["verdict_source"]},
        )
    )
    register_collection_routes(
        Route("leaderboards/verdicts/", views.leaderboard, "verdict_leaderboard"),
        Route("download/verdicts/<slug:name>/", views.download_verdicts, "download_verdicts"),
        Route("download/verdict-scores/<slug:name>/", views.download_scores, "download_verdict_scores"),
    )
    # 5. The scores: one source per verdict source name, kept by the foundation.
    register_score_family(
        ScoreFamily(
            name=SCORE_FAMILY,
            title="Answer verdicts",
            headers=("Verdict source",),
            source=_score_source,
            listed=scoring.listed,
            compute=scoring.compute,
            job_scope=scoring.job_scope,
            work_scope=scoring.work_scope,
            empty="No verdict source has verdicts yet.",
            order=90,
            notes=scoring.notes,
        )
    )
