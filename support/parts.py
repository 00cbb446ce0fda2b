"""What the support app adds to the shell (assessor.registry)."""

from collections import defaultdict
from collections.abc import Sequence
from functools import partial
from urllib.parse import urlencode

from django import forms
from django.urls import reverse

from assessor.jobs.forms import RunsLaunchForm
from assessor.models import AssessorWork, Job
from assessor.names import NameField
from assessor.registry import (
    BADGE_PROVISIONAL,
    WORK_GROUP,
    AnswerBadges,
    AnswerPanel,
    Badge,
    Download,
    Importer,
    JobKind,
    LabelFamily,
    NavLink,
    Route,
    ScoreFamily,
    ScoreRefresh,
    ScoreSource,
    TopicCount,
    WorkPage,
    register_answer_badges,
    register_answer_panel,
    register_collection_routes,
    register_fake_answer,
    register_importer,
    register_job_kind,
    register_label_family,
    register_nav_link,
    register_score_family,
    register_topic_count,
    register_urls,
    register_work_page,
)
from assessor.scoring.kept import kept_topic_counts
from assessor.scoring.lifecycle import provisional_flag
from support import answer_panel, auto, comparison, judging, study, views
from support.fake_answers import FAKE_ANSWERS
from support.importing import support_import
from support.kinds import AUTO_SUPPORT, IMPORT_SUPPORT, LABEL_FAMILY, SUPPORT_POSTEDIT, SUPPORT_SCRATCH
from support.models import SupportLabel
from support.prompts import SUPPORT
from support.selectors import (
    FAMILY,
    method_compute,
    method_job_scope,
    method_notes,
    method_work_scope,
    methods_notes,
    support_methods_from_labels,
    support_scores,
)
from support.services import support_work_give

SUPPORT_CODES: dict[int, str] = {
    SupportLabel.Label.FS: "FS",
    SupportLabel.Label.PS: "PS",
    SupportLabel.Label.NS: "NS",
    SupportLabel.Label.UNJUDGED: "unjudged",
}


def _method_kind_field() -> forms.Field:
    return forms.ChoiceField(
        choices=SupportLabel.MethodKind.choices,
        initial=SupportLabel.MethodKind.SCRATCH,
        required=False,
        label="Support method kind",
    )


def _method_name_field() -> forms.Field:
    return NameField(required=False, label="Support method name", help_text="Defaults to the kind.")


def _method_source(columns: tuple[str, ...]) -> ScoreSource:
    (method,) = columns
    return ScoreSource(
        key=method,
        title=f"{method} support",
        columns=(method,),
        scores=partial(support_scores, method=method),
        leaderboard_url=f"{reverse('collection:support_leaderboard')}?{urlencode({'method': method})}",
        leaderboard_label="runs by weighted precision",
        downloads=(
            Download("scores", reverse("collection:download_support_scores", args=[method])),
            Download("labels", reverse("collection:download_support", args=[method])),
        ),
        notes=partial(method_notes, method=method),
    )


def _method_columns() -> list[tuple[str, ...]]:
    return [(method,) for method in support_methods_from_labels()]


def _first_citation_badges(answer_ids: Sequence[int]) -> dict[int, list[Badge]]:
    """Each sentence's labels on its first citation (the pair the metrics judge), by method."""
    badges: dict[int, list[Badge]] = defaultdict(list)
    made: dict[tuple[str, int, bool], Badge] = {}  # a page shows a few methods and labels on hundreds of sentences
    rows = (
        SupportLabel.objects.filter(citation__sentence__answer_id__in=answer_ids, citation__position=0)
        .order_by("method")
        .annotate(provisional=provisional_flag())
        .values_list("citation__sentence_id", "method", "label", "provisional")
    )
    for sentence_id, method, label, provisional in rows:
        key = (method, label, provisional)
        if key not in made:
            code = SUPPORT_CODES[label]
            state = BADGE_PROVISIONAL if provisional else ""
            made[key] = Badge(text=f"{method}: {code}", css=code.lower(), title=method, state=state)
        badges[sentence_id].append(made[key])
    return badges


def _progress(works: Sequence[AssessorWork]) -> dict[int, tuple[int, int]]:
    return {row.work.pk: (row.pairs_done, row.pairs_total) for row in judging.support_progress(works)}


def _register_importer() -> None:
    register_importer(
        Importer(
            IMPORT_SUPPORT,
            "Support judgments (JSONL)",
            support_import,
            scores=ScoreRefresh.TOUCHED,
            fields={"method_kind": _method_kind_field, "method_name": _method_name_field},
            required=("method_kind",),
            options=lambda data: {"method": data["method_kind"], "method_name": data["method_name"] or None},
        )
    )


def _method_board_url(job: Job) -> str:
    """What an automatic support job made: its method's leaderboard."""
    return _method_source((job.output_name,)).leaderboard_url


def _register_job_kind() -> None:
    register_job_kind(
        JobKind(
            kind=AUTO_SUPPORT,
            label="Automatic support judging",
            command="run_auto_support",
            description="An LLM judges whether each cited segment supports the sentence that cites it.",
            compute=auto.item_compute,
            store=auto.item_store,
            create=auto.auto_support_job_create,
            form=RunsLaunchForm,
            prompts=(SUPPORT,),
            output_url=_method_board_url,
        )
    )


def _register_work_pages() -> None:
    for kind, label, description in (
        (SUPPORT_SCRATCH, "Support from scratch", "The assessor judges each sentence's citation, without LLM labels."),
        (SUPPORT_POSTEDIT, "Support with LLM labels", "The assessor checks and corrects an LLM's support labels."),
    ):
        register_work_page(
            WorkPage(
                kind=kind,
                label=label,
                description=description,
                url_name="support:judge",
                give=support_work_give,
                stage=2,
                progress=_progress,
                unit="pairs",
            )
        )


def _register_score_family() -> None:
    register_score_family(
        ScoreFamily(
            name="methods",
            title="Support methods",
            headers=("Method",),
            source=_method_source,
            listed=_method_columns,
            compute=method_compute,
            job_scope=method_job_scope,
            work_scope=method_work_scope,
            empty="No support method has labels yet.",
            order=20,
            notes=methods_notes,
            crosstab=comparison.method_crosstab,
            require=comparison.method_require_columns,
            describe=comparison.method_describe,
            label_source=comparison.method_label_source,
        )
    )


def register() -> None:
    register_fake_answer(*FAKE_ANSWERS)
    register_urls("support/", "support.urls")
    _register_importer()
    _register_job_kind()
    register_collection_routes(
        Route("leaderboards/support/", views.leaderboard, "support_leaderboard"),
        Route("download/support/<slug:method>/", views.download_labels, "download_support"),
        Route("download/support-scores/<slug:method>/", views.download_scores, "download_support_scores"),
    )
    _register_work_pages()
    register_label_family(
        LabelFamily(
            LABEL_FAMILY,
            "support method",
            item_labels=study.item_labels,
            labels=tuple(study.LABEL_NAMES.values()),
            study=study.STUDY,
            score_family=FAMILY,
        )
    )
    register_nav_link(
        NavLink("Support judging", "give support judging to assessors, follow it", "support:organize", 54, WORK_GROUP)
    )
    _register_score_family()
    register_topic_count(TopicCount("Support methods", partial(kept_topic_counts, FAMILY), order=30))
    register_answer_badges(AnswerBadges(name="support", sentence_badges=_first_citation_badges))
    register_answer_panel(
        AnswerPanel(
            "Support of the citations", "support/answer_panel.html", answer_panel.answer_panel_context, order=20
        )
    )
