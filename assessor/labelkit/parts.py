"""What an app on the answer-label kit adds to the registry, in one call from its own parts.py."""

from functools import partial
from urllib.parse import urlencode

from django.contrib import admin
from django.urls import URLPattern, reverse

from assessor.jobs.forms import RunsLaunchForm
from assessor.labelkit.files import AnswerLabelsImport
from assessor.labelkit.job import AnswerJob
from assessor.labelkit.registered import registered
from assessor.labelkit.scores import AnswerScores
from assessor.labelkit.spec import AnswerLabels
from assessor.labelkit.work import AnswerWork
from assessor.names import NameField
from assessor.registry import (
    Download,
    Importer,
    JobKind,
    LabelFamily,
    ScoreFamily,
    ScoreRefresh,
    ScoreSource,
    WorkPage,
    register_importer,
    register_job_kind,
    register_label_family,
    register_score_family,
    register_urls,
    register_work_page,
)


def answer_labels_urls(spec: AnswerLabels) -> list[URLPattern]:
    """The label-app kit's seven pages of the app's people's work: the app's URL module's `urlpatterns`, with
    `app_name = spec.name`."""
    return AnswerWork(spec).judging().urls()


def _board_url(spec: AnswerLabels, name: str) -> str:
    return f"{reverse('labels:leaderboard', args=[spec.name])}?{urlencode({'source': name})}"


def _score_source(spec: AnswerLabels, columns: tuple[str, ...]) -> ScoreSource:
    (name,) = columns
    board = _board_url(spec, name)
    return ScoreSource(
        key=name,
        title=f"{name} {spec.noun}s",
        columns=columns,
        scores=partial(AnswerScores(spec).scores, name=name),
        leaderboard_url=board,
        leaderboard_label=f"runs by {spec.ranked_by}",
        downloads=(
            Download("score file", reverse("labels:score_file", args=[spec.name, name])),
            Download(f"{spec.noun}s", reverse("labels:download", args=[spec.name, name])),
        ),
        notes=lambda: AnswerScores(spec).notes([columns])[columns],
    )


def _label_admin(spec: AnswerLabels) -> None:
    """A label is a record of who or what made it: the admin shows it, with its provenance, and changes nothing."""
    fields = [field.name for field in spec.model._meta.fields]
    shown = ("answer", "source", "label", "created_by", "job", "imported_from", "created_at")
    options = {"list_display": shown, "raw_id_fields": ("answer", "work"), "readonly_fields": fields}
    admin.site.register(spec.model, type(f"{spec.model.__name__}Admin", (admin.ModelAdmin,), options))


def _register_work(spec: AnswerLabels, url_module: str) -> None:
    work = AnswerWork(spec)
    register_urls(f"{spec.name}/", url_module)
    register_work_page(
        WorkPage(
            spec.work_kind,
            spec.title,
            f"{spec.name}:judge",
            work.give,
            stage=spec.stage,
            progress=work.progress,
            unit="answers",
            description=spec.about_work,
        )
    )


def _register_scores(spec: AnswerLabels) -> None:
    scoring = AnswerScores(spec)
    register_score_family(
        ScoreFamily(
            spec.name,
            spec.title,
            (f"{spec.noun.capitalize()} source",),
            partial(_score_source, spec),
            scoring.listed,
            scoring.compute,
            scoring.job_scope,
            scoring.work_scope,
            f"No {spec.noun} source has {spec.noun}s yet.",
            spec.order,
            scoring.notes,
        )
    )


def answer_labels_register(spec: AnswerLabels, *, url_module: str) -> None:
    """Everything of the app but its model, its prompt's fake answer and its URL module (`url_module`, which holds
    `answer_labels_urls(spec)`)."""
    registered[spec.name] = spec
    register_label_family(LabelFamily(spec.name, f"{spec.noun} source"))
    job = AnswerJob(spec)
    register_job_kind(
        JobKind(
            spec.job_kind,
            spec.title,
            job.compute,
            job.store,
            job.create,
            RunsLaunchForm,
            (spec.prompt,),
            description=spec.about_job,
            output_url=lambda job: _board_url(spec, job.output_name),  # what the job made: its source's board
        )
    )
    field = f"{spec.noun}_source"
    register_importer(
        Importer(
            spec.name,
            f"{spec.title} (JSONL)",
            lambda **options: AnswerLabelsImport(spec=spec, **options).run(),
            scores=ScoreRefresh.TOUCHED,
            required=(field,),
            fields={field: lambda: NameField(required=False, label=f"{spec.noun.capitalize()} source")},
            options=lambda data: {"name": data[field]},
        )
    )
    _register_work(spec, url_module)
    _register_scores(spec)
    _label_admin(spec)
