"""What the assignment app adds to the shell (assessor.registry)."""

from collections import defaultdict
from collections.abc import Collection, Mapping, Sequence
from functools import partial
from urllib.parse import urlencode

from django import forms
from django.contrib.auth.models import User
from django.urls import reverse

from assessor.collection.forms import run_id_field
from assessor.models import AssessorWork, Job, Topic
from assessor.names import NameField
from assessor.registry import (
    BADGE_PROVISIONAL,
    BADGE_STALE,
    WORK_GROUP,
    AnswerBadges,
    AnswerPanel,
    Badge,
    BadgeRow,
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
from assignment import answer_panel, auto, comparison, dependents, judging, study, views
from assignment.fake_answers import FAKE_ANSWERS
from assignment.forms import AutoAssignForm
from assignment.importing import assignments_import
from assignment.judging import assign_work_give
from assignment.kinds import ASSIGN_MANUAL, AUTO_ASSIGN, IMPORT_ASSIGNMENTS, LABEL_FAMILY
from assignment.models import AssignmentLabel
from assignment.prompts import ASSIGN
from assignment.selectors import (
    FAMILY,
    condition_compute,
    condition_job_prepare,
    condition_job_scope,
    condition_notes,
    condition_work_scope,
    conditions_from_labels,
    conditions_notes,
    nugget_scores,
    stale_nuggets,
)
from nuggets.dependents import NuggetDependents, register_nugget_dependents
from nuggets.models import Nugget
from nuggets.parts import nuggets_kind_field, nuggets_name_field, retire_labels_field

LABEL_LETTERS: dict[str, str] = {AssignmentLabel.Label.SUPPORT: "S", AssignmentLabel.Label.PARTIAL_SUPPORT: "P"}


def _assigner_kind_field() -> forms.Field:
    return forms.ChoiceField(
        choices=AssignmentLabel.AssignerKind.choices, initial=AssignmentLabel.AssignerKind.MANUAL, required=False
    )


def _assigner_name_field() -> forms.Field:
    return NameField(required=False, help_text="Defaults to the kind.")


def _import_options(data: dict) -> dict:
    return {
        "nuggets": data["nuggets_kind"],
        "assigner": data["assigner_kind"],
        "nuggets_name": data["nuggets_name"] or None,
        "assigner_name": data["assigner_name"] or None,
        "run_id": data.get("run_id") or None,
        "retire_labels": data["retire_labels"],
    }


def _condition_source(columns: tuple[str, ...]) -> ScoreSource:
    nuggets, assigner = columns
    return ScoreSource(
        key=(nuggets, assigner),
        title=f"{nuggets} nuggets / {assigner} assignment",
        columns=(nuggets, assigner),
        scores=partial(nugget_scores, nuggets=nuggets, assigner=assigner),
        leaderboard_url=f"{reverse('assignment:leaderboard')}?{urlencode({'nuggets': nuggets, 'assigner': assigner})}",
        leaderboard_label="runs by Vstrict",
        downloads=(
            Download("scores", reverse("collection:download_scores", args=[nuggets, assigner])),
            Download("assignments", reverse("collection:download_assignments", args=[nuggets, assigner])),
            Download("nuggets", reverse("collection:download_nuggets", args=[nuggets])),
        ),
        notes=partial(condition_notes, nuggets=nuggets, assigner=assigner),
    )


# answer -> (set name, assigner) -> nugget -> (position, nugget, label, state); label "" for a stale nugget not labelled
ByCondition = dict[int, dict[tuple[str, str], dict[int, tuple[int, int, str, str]]]]


def _labels_by_condition(
    label_rows: Sequence[tuple[int, int, str, str, bool]],
    stale: Mapping[str, Collection[int]],
    nuggets: Mapping[int, tuple[str, str, int, str]],
) -> ByCondition:
    """Each answer's labels by condition, with the stale nuggets of its topic its assigner has not labelled again."""
    by_answer: ByCondition = defaultdict(lambda: defaultdict(dict))
    for answer_id, nugget_id, assigner, label, provisional in label_rows:
        set_name, _, position, _ = nuggets[nugget_id]
        state = BADGE_STALE if nugget_id in stale.get(assigner, ()) else BADGE_PROVISIONAL if provisional else ""
        by_answer[answer_id][(set_name, assigner)][nugget_id] = (position, nugget_id, label, state)
    for conditions in by_answer.values():
        for (set_name, assigner), labels in conditions.items():
            topics = {nuggets[nugget_id][1] for nugget_id in labels}
            for nugget_id in stale.get(assigner, ()):
                stale_set, topic_id, position, _ = nuggets.get(nugget_id, ("", "", 0, ""))
                if stale_set == set_name and topic_id in topics and nugget_id not in labels:
                    labels[nugget_id] = (position, nugget_id, "", BADGE_STALE)
    return by_answer


def _condition_rows(answer_ids: Sequence[int]) -> dict[int, list[BadgeRow]]:
    """Each answer's labels, a row per condition, in nugget order.

    A label of open work or of a running job is marked provisional. Where a nugget list changed since an
    LLM labelled it (its assigner is stale there), the changed nuggets it has not labelled again show in
    its row as stale, so that the row does not look complete.

    The nuggets are read apart from their labels: a page of 25 answers holds about a thousand labels on
    forty nuggets, and the same badge (nugget, number, label) recurs on most answers, so it is made once.
    """
    label_rows = list(
        AssignmentLabel.objects.filter(answer_id__in=answer_ids)
        .order_by()
        .annotate(provisional=provisional_flag())
        .values_list("answer_id", "nugget_id", "assigner", "label", "provisional")
    )
    stale = stale_nuggets({row[2] for row in label_rows})
    nuggets = {
        pk: (set_name, topic_id, position, text)
        for pk, set_name, topic_id, position, text in Nugget.objects.filter(
            pk__in={row[1] for row in label_rows} | {pk for ids in stale.values() for pk in ids}
        ).values_list("pk", "nugget_set__name", "nugget_set__topic_id", "position", "text")
    }
    by_answer = _labels_by_condition(label_rows, stale, nuggets)
    made: dict[tuple[int, int, str, str], Badge] = {}

    def badge(number: int, nugget_id: int, label: str, state: str) -> Badge:
        key = (number, nugget_id, label, state)
        if key not in made:
            text = nuggets[nugget_id][3]
            made[key] = Badge(
                text=f"{number}{LABEL_LETTERS.get(label, 'N') if label else '-'}",
                css=label,
                title=f"{number}. {text}: {label or 'changed since, not labelled again'}",
                state=state,
            )
        return made[key]

    return {
        answer_id: [
            BadgeRow(
                caption=f"{set_name} / {assigner}",
                badges=[
                    # Numbered as the list numbers its nuggets, whatever is labelled yet.
                    badge(position + 1, nugget_id, label, state)
                    for position, nugget_id, label, state in sorted(labels.values())
                ],
            )
            for (set_name, assigner), labels in sorted(conditions.items())
        ]
        for answer_id, conditions in by_answer.items()
    }


def _work_give(*, topic: Topic, assessor: User, kind: str, by: User | None) -> AssessorWork:
    """ManualAssign with its defaults: the topic's only nugget list made by a person, the assigner `manual`."""
    return assign_work_give(topic=topic, assessor=assessor, by=by)


def _progress(works: Sequence[AssessorWork]) -> dict[int, tuple[int, int]]:
    return {row.work.pk: (row.labels_done, row.labels_total) for row in judging.assign_progress(works)}


def _register_importer() -> None:
    register_importer(
        Importer(
            IMPORT_ASSIGNMENTS,
            "Nugget assignments (JSONL)",
            assignments_import,
            scores=ScoreRefresh.TOUCHED,
            fields={
                "nuggets_kind": nuggets_kind_field,
                "nuggets_name": nuggets_name_field,
                "assigner_kind": _assigner_kind_field,
                "assigner_name": _assigner_name_field,
                "run_id": run_id_field,
                "retire_labels": retire_labels_field,
            },
            required=("nuggets_kind", "assigner_kind"),
            options=_import_options,
        )
    )


def _assigner_board_url(job: Job) -> str | None:
    """What an AutoAssign job made: its assigner's leaderboard, on the nugget list it labelled against (a re-run of
    stale nuggets: the first list it labelled again)."""
    nuggets = job.params.get("nuggets") or min(job.params.get("stale") or {}, default="")
    if not nuggets:
        return None
    return _condition_source((nuggets, job.output_name)).leaderboard_url


def _register_job_kind() -> None:
    register_job_kind(
        JobKind(
            kind=AUTO_ASSIGN,
            label="AutoAssign",
            command="run_auto_assign",
            description="An LLM labels whether each answer supports each nugget of a nugget list.",
            compute=auto.item_compute,
            store=auto.item_store,
            rows=auto.item_rows,
            create=auto.auto_assign_job_create,
            form=AutoAssignForm,
            prompts=(ASSIGN,),
            output_url=_assigner_board_url,
            # Its labels are assignment labels, which only the conditions read; it makes no nugget list.
            scored_in=(FAMILY,),
        )
    )


def _register_work_page() -> None:
    register_work_page(
        WorkPage(
            kind=ASSIGN_MANUAL,
            label="ManualAssign",
            description="The assessor labels whether each answer supports each nugget of the topic's list.",
            url_name="judge:assign",
            give=_work_give,
            stage=1,
            progress=_progress,
            waiting=judging.assign_waiting,
            unit="labels",
        )
    )


def _register_score_family() -> None:
    register_score_family(
        ScoreFamily(
            name="conditions",
            title="Nugget conditions",
            headers=("Nugget set", "Assigner"),
            source=_condition_source,
            listed=conditions_from_labels,
            compute=condition_compute,
            job_scope=condition_job_scope,
            job_prepare=condition_job_prepare,
            work_scope=condition_work_scope,
            empty="No condition has assignment labels yet.",
            order=10,
            notes=conditions_notes,
            crosstab=comparison.condition_crosstab,
            require=comparison.condition_require_columns,
            describe=comparison.condition_describe,
            label_source=comparison.condition_label_source,
            llm_like=comparison.condition_llm_like,
        )
    )


def register() -> None:
    register_fake_answer(*FAKE_ANSWERS)
    register_nugget_dependents(
        NuggetDependents(
            name="assignment",
            describe=dependents.labels_describe,
            retire=dependents.labels_retire,
            changed=dependents.list_changed,
        )
    )
    register_urls("assignment/", "assignment.urls")
    register_urls("judge/", "assignment.judge_urls")
    _register_importer()
    _register_job_kind()
    register_collection_routes(
        Route(
            "download/assignments/<slug:nuggets>/<slug:assigner>/", views.download_assignments, "download_assignments"
        ),
        Route("download/scores/<slug:nuggets>/<slug:assigner>/", views.download_scores, "download_scores"),
    )
    _register_work_page()
    register_label_family(
        LabelFamily(
            LABEL_FAMILY,
            "assigner",
            set_item_labels=study.set_item_labels,
            labels=study.LABELS,
            study=study.STUDY,
            score_family=FAMILY,
        )
    )
    register_nav_link(
        NavLink("ManualAssign", "give nugget assignment to assessors, follow it", "judge:organize", 52, WORK_GROUP)
    )
    _register_score_family()
    register_topic_count(TopicCount("Nugget conditions", partial(kept_topic_counts, FAMILY), order=20))
    register_answer_badges(AnswerBadges(name="assignment", answer_rows=_condition_rows))
    register_answer_panel(
        AnswerPanel("Nugget assignment", "assignment/answer_panel.html", answer_panel.answer_panel_context, order=10)
    )
