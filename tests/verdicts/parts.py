"""What the verdicts app adds to the registry, found and called by the foundation while Django starts: the steps of
docs/architecture.md's "Adding a judge"."""

from functools import partial
from urllib.parse import urlencode

from django.contrib import admin
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
from tests.verdicts import judge, labels, work
from tests.verdicts.models import IMPORT_VERDICTS, LABEL_FAMILY, SCORE_FAMILY, VERDICT_JOB, VERDICT_WORK, Verdict


@admin.register(Verdict)
class VerdictAdmin(admin.ModelAdmin):
    """A verdict is a record of who or what said it: the admin shows it, with its provenance, and changes nothing."""

    list_display = ("answer", "source", "label", "created_by", "job", "imported_from", "created_at")
    raw_id_fields = ("answer", "work")
    readonly_fields = [field.name for field in Verdict._meta.fields]


def _score_source(columns: tuple[str, ...]) -> ScoreSource:
    (name,) = columns
    return ScoreSource(
        key=name,
        title=f"{name} verdicts",
        columns=columns,
        scores=partial(labels.verdict_scores, name=name),
        leaderboard_url=f"{reverse('collection:verdict_leaderboard')}?{urlencode({'source': name})}",
        leaderboard_label="runs by share of yes",
        downloads=(
            Download("scores", reverse("collection:download_verdict_scores", args=[name])),
            Download("verdicts", reverse("collection:download_verdicts", args=[name])),
        ),
        notes=lambda: labels.notes([columns])[columns],
    )


def _fake_verdict(user: str) -> str:
    """The fake LLM server's verdict: yes when the answer shares a word of four letters or more with the question."""
    return "yes" if long_words(line_after(user, "Question: ")) & long_words(line_after(user, "Answer: ")) else "no"


def register() -> None:
    register_label_family(LabelFamily(LABEL_FAMILY, "verdict source"))
    about_job = "An LLM says, answer by answer, whether the answer answers its topic's question."
    register_job_kind(
        JobKind(
            VERDICT_JOB,
            "Answer verdicts",
            judge.item_compute,
            judge.item_store,
            judge.verdict_job_create,
            RunsLaunchForm,
            (judge.VERDICT,),
            description=about_job,
        )
    )
    # Known by how its system message starts; a server started with --flip says the opposite.
    register_fake_answer(
        FakeAnswer("You are YesNoJudgeLLM", _fake_verdict, flip={"yes": "no", "no": "yes"}.__getitem__)
    )
    register_urls("verdicts/", "tests.verdicts.work")  # the label-app kit's seven pages
    about_work = "The assessor says, answer by answer, whether the answer answers the question."
    register_work_page(
        WorkPage(
            VERDICT_WORK,
            "Answer verdicts",
            "verdicts:judge",
            work.verdict_work_give,
            stage=3,
            progress=work.verdict_progress,
            unit="answers",
            description=about_work,
        )
    )
    register_importer(
        Importer(
            IMPORT_VERDICTS,
            "Answer verdicts (JSONL)",
            lambda **kw: labels.VerdictsImport(**kw).run(),
            scores=ScoreRefresh.TOUCHED,
            required=("verdict_source",),
            fields={"verdict_source": lambda: NameField(required=False, label="Verdict source")},
            options=lambda data: {"name": data["verdict_source"]},
        )
    )
    register_collection_routes(
        Route("leaderboards/verdicts/", labels.leaderboard, "verdict_leaderboard"),
        Route("download/verdicts/<slug:name>/", labels.download_verdicts, "download_verdicts"),
        Route("download/verdict-scores/<slug:name>/", labels.download_scores, "download_verdict_scores"),
    )
    register_score_family(
        ScoreFamily(
            SCORE_FAMILY,
            "Answer verdicts",
            ("Verdict source",),
            _score_source,
            labels.listed,
            labels.compute,
            labels.job_scope,
            labels.work_scope,
            "No verdict source has verdicts yet.",
            90,
            labels.notes,
        )
    )
