"""What the nuggets app adds to the shell (assessor.registry)."""

from collections.abc import Sequence

from django import forms
from django.db.models import Count
from django.urls import reverse

from assessor.models import AssessorWork, Job, Topic
from assessor.names import NameField
from assessor.registry import (
    EVERY_FAMILY,
    WORK_GROUP,
    Importer,
    JobKind,
    LabelFamily,
    NavLink,
    Route,
    ScoreRefresh,
    TopicCount,
    TopicPanel,
    WorkPage,
    register_collection_routes,
    register_deletable,
    register_fake_answer,
    register_importer,
    register_job_kind,
    register_label_family,
    register_nav_link,
    register_topic_count,
    register_topic_panel,
    register_upload_dependents,
    register_urls,
    register_work_page,
)
from nuggets import auto, views
from nuggets.bankfiles import banks_import
from nuggets.deleting import NUGGETS_DELETABLE, qrels_read_by_nugget_work
from nuggets.exporting import nuggets_notes
from nuggets.fake_answers import FAKE_ANSWERS
from nuggets.forms import AutoNuggetsForm
from nuggets.giving import nugget_cap, nugget_work_give
from nuggets.importing import RETIRE_LABELS_LABEL, nuggets_import
from nuggets.kinds import (
    AUTO_NUGGETS,
    BANK_AUTO_EDIT,
    BANK_KINDS,
    BANK_MANUAL,
    DRAFT_NUGGETS,
    IMPORT_BANKS,
    IMPORT_NUGGETS,
    LABEL_FAMILY,
    NUGGETS_AUTO_EDIT,
    NUGGETS_MANUAL,
)
from nuggets.models import NuggetSet
from nuggets.prompts import IMPORTANCE, NUGGETIZE
from nuggets.selectors import nugget_works, topic_nugget_sets

# The nugget set a kind of work opens.
WORK_CONDITIONS = {
    NUGGETS_MANUAL: NuggetSet.Kind.MANUAL,
    NUGGETS_AUTO_EDIT: NuggetSet.Kind.AUTO_EDIT,
    BANK_MANUAL: NuggetSet.Kind.MANUAL,
    BANK_AUTO_EDIT: NuggetSet.Kind.AUTO_EDIT,
}


def nuggets_kind_field() -> forms.Field:
    return forms.ChoiceField(
        choices=NuggetSet.Kind.choices, initial=NuggetSet.Kind.AUTO_EDIT, required=False, label="Nugget kind"
    )


def nuggets_name_field() -> forms.Field:
    return NameField(required=False, label="Nugget set name", help_text="Defaults to the kind.")


def banks_name_field() -> forms.Field:
    return NameField(required=False, label="Bank name", help_text="The name of the topics' question banks.")


def banks_kind_field() -> forms.Field:
    return forms.ChoiceField(
        choices=NuggetSet.Kind.choices,
        initial=NuggetSet.Kind.AUTO,
        required=False,
        label="Bank kind",
        help_text="How the banks were made; AutoNuggets drafts are banks for people to post-edit.",
    )


def retire_labels_field() -> forms.Field:
    # The upload page's --retire-labels: replacing a labelled list is confirmed, never implied by "replace".
    return forms.BooleanField(
        required=False,
        label=RETIRE_LABELS_LABEL,
        help_text="With replace: confirm replacing a nugget list that has labels on it (they are kept, not scored).",
    )


def _progress(works: Sequence[AssessorWork]) -> dict[int, tuple[int, int]]:
    """The nuggets in each work's list, against what the list may hold while editing."""
    # nugget_count is an annotation of nugget_works(), which the type checker cannot see.
    counted = nugget_works().filter(pk__in=[work.pk for work in works]).values_list("pk", "kind", "nugget_count")  # type: ignore[misc]
    return {pk: (count, nugget_cap(WORK_CONDITIONS[kind])) for pk, kind, count in counted}


def _work_give(*, topic, assessor, kind, by) -> AssessorWork:
    # Opens the topic's nugget set too, as giving the work on the organizer's page does.
    form = NuggetSet.Form.QUESTIONS if kind in BANK_KINDS else NuggetSet.Form.FACTS
    return nugget_work_give(topic=topic, assessor=assessor, condition=WORK_CONDITIONS[kind], by=by, form=form)


def _nugget_sets_panel(topic: Topic) -> dict:
    """The topic's nugget sets, each with what its download leaves out or marks provisional (`nuggets_notes`)."""
    nugget_sets = topic_nugget_sets(topic=topic)
    return {"nugget_sets": [(nugget_set, nuggets_notes(name=nugget_set.name)) for nugget_set in nugget_sets]}


def _banks_panel(topic: Topic) -> dict:
    """The topic's question banks, apart from its fact nuggets (the first family's conditions)."""
    banks = topic_nugget_sets(topic=topic, form=NuggetSet.Form.QUESTIONS, answers=True)
    return {"banks": [(bank, nuggets_notes(name=bank.name)) for bank in banks]}


def _nugget_sets_per_topic() -> dict[str, int]:
    rows = NuggetSet.objects.filter(form=NuggetSet.Form.FACTS).order_by().values("topic_id").annotate(n=Count("pk"))
    return {row["topic_id"]: row["n"] for row in rows}


def _register_importers() -> None:
    register_importer(
        Importer(
            IMPORT_NUGGETS,
            "Nuggets (nuggetizer JSONL)",
            nuggets_import,
            scores=ScoreRefresh.TOUCHED,
            fields={
                "nuggets_kind": nuggets_kind_field,
                "nuggets_name": nuggets_name_field,
                "retire_labels": retire_labels_field,
            },
            required=("nuggets_kind",),
            options=lambda data: {
                "kind": data["nuggets_kind"],
                "name": data["nuggets_name"] or None,
                "retire_labels": data["retire_labels"],
            },
        )
    )
    register_importer(
        Importer(
            IMPORT_BANKS,
            "Question banks (AutoJudge v3 JSONL)",
            banks_import,
            scores=ScoreRefresh.TOUCHED,
            fields={
                "banks_name": banks_name_field,
                "banks_kind": banks_kind_field,
                "retire_labels": retire_labels_field,
            },
            required=("banks_name",),
            options=lambda data: {
                "name": data["banks_name"],
                "kind": data["banks_kind"] or NuggetSet.Kind.AUTO,
                "retire_labels": data["retire_labels"],
            },
        )
    )


def _nugget_sets_url(job: Job) -> str:
    """What an AutoNuggets job made: its nugget sets of every topic, as the download of their name gives them."""
    return reverse("collection:download_nuggets", args=[job.output_name])


def _register_job_kinds() -> None:
    register_job_kind(
        JobKind(
            kind=AUTO_NUGGETS,
            label="AutoNuggets",
            command="run_auto_nuggets",
            description="An LLM writes and rates the nuggets of each topic, from its relevant segments.",
            compute=auto.item_compute,
            store=auto.item_store,
            create=auto.auto_nuggets_job_create,
            form=AutoNuggetsForm,
            prompts=(NUGGETIZE, IMPORTANCE),
            output_url=_nugget_sets_url,
        )
    )
    # Drafts are the same job stopped after creation; the AutoNuggets form launches them (its "drafts" box).
    register_job_kind(
        JobKind(
            kind=DRAFT_NUGGETS,
            label="AutoNuggets drafts (for post-editing)",
            command="run_auto_nuggets --drafts",
            compute=auto.item_compute,
            store=auto.item_store,
            prompts=(NUGGETIZE,),
            output_url=_nugget_sets_url,
        )
    )


def _register_work_pages() -> None:
    for kind, label, description in (
        (NUGGETS_MANUAL, "ManualNuggets", "The assessor writes the topic's nuggets from its relevant segments."),
        (NUGGETS_AUTO_EDIT, "AutoNuggets+Edits", "The assessor post-edits the nuggets an LLM drafted."),
        (BANK_MANUAL, "Question bank", "The assessor writes the topic's questions, with gold answers and documents."),
        (BANK_AUTO_EDIT, "Question bank post-edit", "The assessor post-edits the question bank an LLM made."),
    ):
        register_work_page(
            WorkPage(
                kind=kind,
                label=label,
                description=description,
                url_name="nuggets:work",
                give=_work_give,
                stage=0,
                progress=_progress,
                unit="questions" if kind in BANK_KINDS else "nuggets",
                family="reports" if kind in BANK_KINDS else None,  # question banks are the reports family's
            )
        )


def _register_topic_panels() -> None:
    register_topic_panel(
        TopicPanel(
            template="nuggets/topic_nugget_sets_panel.html",
            context=_nugget_sets_panel,
            order=10,
            title="Nugget sets",
            anchor="nuggets",
        )
    )
    # Shown only on a topic with banks (most TREC 2024 topics have none), so it is not in the page's section links.
    register_topic_panel(
        TopicPanel(template="nuggets/topic_banks_panel.html", context=_banks_panel, order=11, family="reports")
    )


def register() -> None:
    register_fake_answer(*FAKE_ANSWERS)
    register_urls("nuggets/", "nuggets.urls")
    _register_importers()
    _register_job_kinds()
    register_collection_routes(Route("download/nuggets/<slug:name>/", views.download_nuggets, "download_nuggets"))
    register_collection_routes(Route("download/banks/<slug:name>/", views.download_banks, "download_banks"))
    _register_work_pages()
    register_label_family(LabelFamily(LABEL_FAMILY, "nugget set"))
    # The page gives nugget lists (rag) and question banks (reports).
    register_nav_link(
        NavLink(
            "Nugget work",
            "give topics to assessors, follow their nugget work",
            "nuggets:organize",
            50,
            WORK_GROUP,
            family=EVERY_FAMILY,
        )
    )
    register_topic_count(TopicCount("Nugget sets", _nugget_sets_per_topic, order=10))
    register_deletable(NUGGETS_DELETABLE)
    register_upload_dependents("qrels", qrels_read_by_nugget_work)
    _register_topic_panels()
