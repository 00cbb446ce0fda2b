"""The admin of the collection, the jobs and the assessors' work.

Provenance (what import or job made a row) is read-only: it is a record, not a setting.
Big foreign keys use raw id fields, and the big tables skip the full count.
"""

from collections.abc import Callable, Sequence

from django import forms
from django.contrib import admin, messages
from django.db.models import QuerySet
from django.http import HttpRequest, HttpResponseRedirect
from django.urls import NoReverseMatch, reverse
from django.utils.html import format_html

from assessor.models import (
    Answer,
    AnswerReference,
    AssessorWork,
    AuditEntry,
    Campaign,
    CampaignMember,
    Citation,
    ImportBatch,
    Job,
    JobItem,
    KeptAnswerScore,
    KeptRunScore,
    KeptSource,
    LabelSource,
    LLMAskInFlight,
    LLMBatch,
    LLMBatchRequest,
    LLMCall,
    LLMEndpoint,
    PromptTemplate,
    Qrel,
    QrelSource,
    Run,
    RunAlias,
    Segment,
    Sentence,
    Topic,
    Upload,
    UserSession,
    WorkEvent,
    WorkOperation,
)
from assessor.registry import registry

PROVENANCE_FIELDS = ("created_at", "created_by", "job", "imported_from", "seconds_spent")


def download_link(url_name: str, *args: str, text: str = "download") -> str:
    """A link to a download page, or a dash while that export is not routed."""
    try:
        return format_html('<a href="{}">{}</a>', reverse(url_name, args=args), text)
    except NoReverseMatch:
        return "-"


def redirect_to_single_download(
    modeladmin: admin.ModelAdmin, request: HttpRequest, keys: Sequence[tuple[str, ...]], url_name: str, what: str
) -> HttpResponseRedirect | None:
    """Send the browser to the download of the one export the selection names; one at a time."""
    if len(keys) != 1:
        named = ", ".join(" / ".join(key) for key in keys[:10])
        modeladmin.message_user(
            request,
            f"Select rows of exactly one {what} to download (the selection has {len(keys)}: {named}).",
            messages.WARNING,
        )
        return None
    return HttpResponseRedirect(reverse(url_name, args=keys[0]))



# --- kinds the apps declare ------------------------------------------------------------------

# Per kinded column: the values the apps declared, with their labels, and the label of any stored value.
Declared = Callable[[], dict[str, str]]


def _job_kinds() -> dict[str, str]:
    return {kind: job_kind.label for kind, job_kind in registry.job_kinds.items()}


def _work_kinds() -> dict[str, str]:
    return {kind: page.label for kind, page in registry.work_pages.items()}


def _import_kinds() -> dict[str, str]:
    return {kind: importer.label for kind, importer in registry.importers.items()}


def _label_families() -> dict[str, str]:
    return {name: family.label for name, family in registry.label_families.items()}


@admin.display(description="kind", ordering="kind")
def kind_column(obj: Job | AssessorWork | ImportBatch | Upload) -> str:
    return obj.kind_label


@admin.display(description="family", ordering="family")
def family_column(source: LabelSource) -> str:
    return source.family_label


def kind_filter(field: str, title: str, declared: Declared, label: Callable[[str], str]) -> type[admin.SimpleListFilter]:
    """A list filter on a kind column: every declared kind by its label, and stored values no app declares."""

    class KindFilter(admin.SimpleListFilter):
        parameter_name = field

        def lookups(self, request: HttpRequest, model_admin: admin.ModelAdmin) -> list[tuple[str, str]]:
            known = declared()
            stored = model_admin.get_queryset(request).order_by().values_list(field, flat=True).distinct()
            unknown = sorted(set(stored) - set(known))
            return [*known.items(), *((value, label(value)) for value in unknown)]

        def queryset(self, request: HttpRequest, queryset: QuerySet) -> QuerySet:
            value = self.value()
            return queryset.filter(**{field: value}) if value else queryset

    KindFilter.title = title
    return KindFilter


def kind_choice_form(model: type, field: str, declared: Declared) -> type[forms.ModelForm]:
    """An admin form whose kind column is a choice of the declared kinds (a stored unknown one stays listed)."""

    class KindForm(forms.ModelForm):
        class Meta:
            # The admin narrows them to its fieldsets and read-only fields (ModelAdmin.get_form).
            fields = "__all__"  # noqa: DJ007

        def __init__(self, *args, **kwargs) -> None:
            super().__init__(*args, **kwargs)
            choices = list(declared().items())
            current = getattr(self.instance, field, "")
            if current and current not in dict(choices):
                choices.append((current, f"{current} (unknown)"))
            self.fields[field] = forms.ChoiceField(choices=choices)

    KindForm.Meta.model = model
    return KindForm


class CampaignMemberInline(admin.TabularInline):
    model = CampaignMember
    extra = 0
    raw_id_fields = ("user",)


@admin.register(Campaign)
class CampaignAdmin(admin.ModelAdmin):
    list_display = ("slug", "title", "families", "answer_word_limit", "answer_reference_cap", "closed_at", "created_at")
    search_fields = ("slug", "title")
    # The key suffix is fixed when the campaign is made: its topics' stored keys end with it.
    readonly_fields = ("key_suffix",)
    inlines = (CampaignMemberInline,)


@admin.register(CampaignMember)
class CampaignMemberAdmin(admin.ModelAdmin):
    list_display = ("campaign", "user", "added_at")
    list_filter = ("campaign",)
    raw_id_fields = ("user",)


@admin.register(Topic)
class TopicAdmin(admin.ModelAdmin):
    list_display = ("id", "campaign", "query", "imported_from")
    list_filter = ("campaign",)
    list_select_related = ("campaign", "imported_from")
    search_fields = ("id", "query")
    readonly_fields = ("imported_from",)


@admin.register(Segment)
class SegmentAdmin(admin.ModelAdmin):
    list_display = ("docid", "title", "short_text")
    search_fields = ("docid",)
    readonly_fields = ("imported_from",)
    show_full_result_count = False

    @admin.display(description="text")
    def short_text(self, segment: Segment) -> str:
        return segment.text[:120]


@admin.register(QrelSource)
class QrelSourceAdmin(admin.ModelAdmin):
    list_display = ("name", "created_at", "imported_from", "job", "download")
    search_fields = ("name",)
    readonly_fields = ("created_at", "imported_from", "job")
    list_select_related = ("imported_from", "job")
    actions = ("download_qrels",)

    @admin.display(description="qrels")
    def download(self, source: QrelSource) -> str:
        return download_link("collection:download_qrels", source.name)

    @admin.action(description="Download the qrels of the selected source")
    def download_qrels(self, request: HttpRequest, queryset: QuerySet[QrelSource]):
        keys = [(name,) for name in queryset.values_list("name", flat=True)]
        return redirect_to_single_download(self, request, keys, "collection:download_qrels", "source")


@admin.register(Qrel)
class QrelAdmin(admin.ModelAdmin):
    list_display = ("topic", "segment", "grade", "source")
    list_filter = ("source", "grade")
    search_fields = ("topic__id", "segment__docid")
    raw_id_fields = ("topic", "segment", "job")
    readonly_fields = ("imported_from",)
    list_select_related = ("source", "topic", "segment")
    show_full_result_count = False


@admin.register(Run)
class RunAdmin(admin.ModelAdmin):
    list_display = ("run_id", "campaign", "created_at", "imported_from")
    list_filter = ("campaign",)
    list_select_related = ("campaign", "imported_from")
    search_fields = ("run_id",)
    readonly_fields = ("created_at", "imported_from")


@admin.register(RunAlias)
class RunAliasAdmin(admin.ModelAdmin):
    """Aliases are made by joining runs (`join_runs`, the run page), which moves answers with them: a record here."""

    list_display = ("alias", "run", "joined_from", "answers_moved", "created_by", "created_at")
    search_fields = ("alias", "run__run_id", "joined_from")
    list_select_related = ("run", "created_by")
    readonly_fields = ("alias", "run", "joined_from", "answers_moved", "created_by", "created_at")

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False


class KeptScoresAdmin(admin.ModelAdmin):
    """Kept scores are derived from the labels and refreshed by every write (`rebuild_scores`): read only."""

    show_full_result_count = False

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False

    def has_change_permission(self, request: HttpRequest, obj=None) -> bool:
        return False

    def has_delete_permission(self, request: HttpRequest, obj=None) -> bool:
        return False


@admin.register(KeptSource)
class KeptSourceAdmin(KeptScoresAdmin):
    list_display = ("family", "name", "metrics")
    list_filter = ("family",)


@admin.register(KeptRunScore)
class KeptRunScoreAdmin(KeptScoresAdmin):
    list_display = ("source", "run", "answered", "sums")
    list_filter = ("source",)
    list_select_related = ("source", "run")


@admin.register(KeptAnswerScore)
class KeptAnswerScoreAdmin(KeptScoresAdmin):
    list_display = ("source", "run", "topic", "values")
    list_filter = ("source",)
    list_select_related = ("source", "run", "topic")
    raw_id_fields = ("answer",)


class SentenceInline(admin.TabularInline):
    model = Sentence
    fields = ("index", "text")
    extra = 0
    show_change_link = True


@admin.register(Answer)
class AnswerAdmin(admin.ModelAdmin):
    list_display = ("topic", "run", "words", "created_at")
    list_filter = ("run",)
    search_fields = ("topic__id", "run__run_id", "text")
    raw_id_fields = ("run", "topic")
    readonly_fields = ("created_at", "imported_from")
    list_select_related = ("run", "topic")
    inlines = (SentenceInline,)
    show_full_result_count = False


@admin.register(AnswerReference)
class AnswerReferenceAdmin(admin.ModelAdmin):
    list_display = ("answer", "rank", "segment")
    search_fields = ("answer__topic__id", "answer__run__run_id", "segment__docid")
    raw_id_fields = ("answer", "segment")
    list_select_related = ("answer__run", "segment")
    show_full_result_count = False


class CitationInline(admin.TabularInline):
    model = Citation
    fields = ("position", "segment", "reference_rank")
    raw_id_fields = ("segment",)
    extra = 0


@admin.register(Sentence)
class SentenceAdmin(admin.ModelAdmin):
    list_display = ("answer", "index", "text")
    search_fields = ("answer__topic__id", "answer__run__run_id", "text")
    raw_id_fields = ("answer",)
    list_select_related = ("answer__run",)
    inlines = (CitationInline,)
    show_full_result_count = False


@admin.register(Citation)
class CitationAdmin(admin.ModelAdmin):
    list_display = ("sentence_id", "position", "segment", "reference_rank")
    search_fields = ("segment__docid",)
    raw_id_fields = ("sentence", "segment")
    list_select_related = ("segment",)
    show_full_result_count = False


@admin.register(ImportBatch)
class ImportBatchAdmin(admin.ModelAdmin):
    list_display = (
        "id", kind_column, "file_name", "imported_at", "imported_by", "lines", "created", "unchanged", "replaced"
    )
    list_filter = (kind_filter("kind", "kind", _import_kinds, registry.import_label),)
    search_fields = ("file_name", "sha256")
    list_select_related = ("imported_by",)
    # An import batch is a record of what happened: nothing in it is edited by hand.
    readonly_fields = (
        "kind",
        "file_name",
        "sha256",
        "options",
        "imported_at",
        "imported_by",
        "lines",
        "created",
        "unchanged",
        "replaced",
        "warnings",
    )


@admin.register(Upload)
class UploadAdmin(admin.ModelAdmin):
    list_display = (
        "id", kind_column, "file_name", "state", "created_at", "created_by", "lines", "created", "error_line"
    )
    list_filter = (kind_filter("kind", "kind", _import_kinds, registry.import_label), "state")
    search_fields = ("file_name", "error")
    list_select_related = ("created_by",)
    raw_id_fields = ("batch",)
    # The record of an upload and its import: the upload's page retries a failed one.
    readonly_fields = tuple(field.name for field in Upload._meta.concrete_fields)


@admin.register(PromptTemplate)
class PromptTemplateAdmin(admin.ModelAdmin):
    list_display = ("name", "version", "sha256", "created_at")
    list_filter = ("name",)
    search_fields = ("name", "system", "user")
    # A changed prompt is a new version: stored versions stay as they were used.
    readonly_fields = ("sha256", "created_at")


class JobItemInline(admin.TabularInline):
    model = JobItem
    fields = ("key", "status", "attempts", "error")
    readonly_fields = fields
    extra = 0
    can_delete = False
    show_change_link = True
    max_num = 0


@admin.register(Job)
class JobAdmin(admin.ModelAdmin):
    form = kind_choice_form(Job, "kind", _job_kinds)
    list_display = (
        "id",
        kind_column,
        "output_name",
        "status",
        "endpoint_name",
        "model",
        "done_items",
        "failed_items",
        "total_items",
        "calls",
        "cost",
        "created_at",
        "created_by",
    )
    list_filter = (kind_filter("kind", "kind", _job_kinds, registry.job_label), "status", "model")
    search_fields = ("output_name", "model", "error")
    list_select_related = ("created_by",)
    readonly_fields = (
        "done_items",
        "failed_items",
        "total_items",
        "calls",
        "tokens_in",
        "tokens_out",
        "tokens_cached",
        "cost",
        "cost_picodollars",
        "created_by",
        "created_at",
        "started_at",
        "finished_at",
        "prompt_versions",
    )


@admin.register(JobItem)
class JobItemAdmin(admin.ModelAdmin):
    list_display = ("job", "key", "status", "attempts", "claimed_by", "finished_at")
    list_filter = ("status",)
    search_fields = ("key", "error")
    raw_id_fields = ("job",)
    readonly_fields = ("claimed_by", "claimed_at", "attempts", "raw_response", "finished_at")
    list_select_related = ("job",)
    show_full_result_count = False


@admin.register(LLMCall)
class LLMCallAdmin(admin.ModelAdmin):
    list_display = (
        "id", "job", "prompt", "model", "tokens_in", "tokens_out", "tokens_cached", "latency_ms", "cost", "from_cache",
        "parsed_ok", "created_at",
    )
    list_filter = ("from_cache", "parsed_ok", "model")
    search_fields = ("cache_key", "error")
    raw_id_fields = ("job", "item", "prompt")
    list_select_related = ("job", "prompt")
    show_full_result_count = False
    # The log of a call is evidence: it is read, never edited.
    readonly_fields = (
        "job",
        "item",
        "prompt",
        "model",
        "messages",
        "raw_response",
        "tokens_in",
        "tokens_out",
        "tokens_cached",
        "latency_ms",
        "cost",
        "cost_picodollars",
        "cache_key",
        "from_cache",
        "parsed_ok",
        "error",
        "created_at",
    )


@admin.register(LLMAskInFlight)
class LLMAskInFlightAdmin(admin.ModelAdmin):
    """The asks being sent now (a few rows, each freed when its answer is cached or its lease runs out)."""

    list_display = ("cache_key", "holder", "lease_until")
    search_fields = ("cache_key", "holder")
    # A claim is the workers' coordination, not data to edit: an edit could let two workers pay for one ask.
    readonly_fields = ("cache_key", "holder", "lease_until")


@admin.register(LLMBatch)
class LLMBatchAdmin(admin.ModelAdmin):
    """A job's batch at the provider: read, never edited (its ids are how a restart finds it again)."""

    list_display = ("id", "job", "round", "state", "provider_id", "request_total", "request_completed", "request_failed")
    list_filter = ("state",)
    search_fields = ("provider_id", "input_file_id", "error")
    raw_id_fields = ("job",)
    list_select_related = ("job",)
    show_full_result_count = False

    def get_readonly_fields(self, request: HttpRequest, obj: LLMBatch | None = None) -> list[str]:
        return [field.name for field in LLMBatch._meta.fields]


@admin.register(LLMBatchRequest)
class LLMBatchRequestAdmin(admin.ModelAdmin):
    """A request sent, or to be sent, in a batch, and its answer: evidence of what was paid, read and never edited."""

    list_display = ("id", "job", "batch", "status", "attempts", "tokens_in", "tokens_out")
    list_filter = ("status",)
    search_fields = ("request_key", "chain_key", "error")
    raw_id_fields = ("job", "item", "batch", "prompt")
    list_select_related = ("job", "batch")
    show_full_result_count = False

    def get_readonly_fields(self, request: HttpRequest, obj: LLMBatchRequest | None = None) -> list[str]:
        return [field.name for field in LLMBatchRequest._meta.fields]


class WorkEventInline(admin.TabularInline):
    model = WorkEvent
    fields = ("at", "user", "action", "detail")
    readonly_fields = fields
    extra = 0
    can_delete = False
    max_num = 0


@admin.register(AssessorWork)
class AssessorWorkAdmin(admin.ModelAdmin):
    form = kind_choice_form(AssessorWork, "kind", _work_kinds)
    list_display = (
        "topic", kind_column, "assessor", "nugget_set_name", "status", "active_seconds", "submitted_at", "reopened_count"
    )
    list_filter = (kind_filter("kind", "kind", _work_kinds, registry.work_label), "status", "assessor")
    search_fields = ("topic__id", "assessor__username", "nugget_set_name")
    raw_id_fields = ("topic",)
    list_select_related = ("topic", "assessor")
    readonly_fields = (
        "active_seconds", "last_activity_at", "submitted_at", "reopened_count", "version", "created_by", "created_at"
    )
    inlines = (WorkEventInline,)


@admin.register(WorkEvent)
class WorkEventAdmin(admin.ModelAdmin):
    list_display = ("work", "at", "user", "action")
    list_filter = ("action",)
    search_fields = ("work__topic__id", "user__username")
    raw_id_fields = ("work",)
    list_select_related = ("work__assessor", "user")
    readonly_fields = ("work", "at", "user", "action", "detail")


@admin.register(WorkOperation)
class WorkOperationAdmin(admin.ModelAdmin):
    list_display = ("work", "op_id", "at")
    search_fields = ("work__topic__id", "op_id")
    raw_id_fields = ("work",)
    list_select_related = ("work__assessor",)
    readonly_fields = ("work", "op_id", "answer", "at")


def _register_llm_slots() -> None:
    # The slots of the LLM semaphore exist only where that part of the project is installed.
    from assessor.models import jobs

    slot_model = getattr(jobs, "LLMSlot", None)
    if slot_model is None or admin.site.is_registered(slot_model):
        return

    @admin.register(slot_model)
    class LLMSlotAdmin(admin.ModelAdmin):
        list_display = ("pool", "number", "holder", "lease_until")
        readonly_fields = ("holder", "lease_until")


_register_llm_slots()


@admin.register(LLMEndpoint)
class LLMEndpointAdmin(admin.ModelAdmin):
    """The organizers' endpoints (those of the settings are not rows); a key is named, never stored."""

    list_display = (
        "name",
        "model",
        "base_url",
        "api_key_env",
        "concurrency",
        "price_input",
        "price_output",
        "price_cached_input",
    )
    search_fields = ("name", "model")
    readonly_fields = ("created_by", "created_at")


@admin.register(LabelSource)
class LabelSourceAdmin(admin.ModelAdmin):
    """A source is a record of who owns a name; it is made by the first write, never edited by hand."""

    list_display = (family_column, "name", "kind", "endpoint_name", "model", "created_at")
    list_filter = (kind_filter("family", "family", _label_families, registry.family_label), "kind")
    search_fields = ("name", "model")
    readonly_fields = [field.name for field in LabelSource._meta.fields]

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False


@admin.register(AuditEntry)
class AuditEntryAdmin(admin.ModelAdmin):
    """The audit trail is a record: nobody edits or deletes it here."""

    list_display = ("at", "actor_name", "action", "target", "detail")
    list_filter = ("action",)
    search_fields = ("actor_name", "target", "detail")

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False

    def has_change_permission(self, request: HttpRequest, obj: object = None) -> bool:
        return False

    def has_delete_permission(self, request: HttpRequest, obj: object = None) -> bool:
        return False


@admin.register(UserSession)
class UserSessionAdmin(admin.ModelAdmin):
    """Who is signed in, and until when: an admin signs a person out by deleting their session. The data is
    neither shown nor edited (it holds the CSRF and login secrets)."""

    list_display = ("session_key_start", "user", "expire_date")
    list_select_related = ("user",)
    search_fields = ("user__username",)
    fields = ("user", "expire_date")
    readonly_fields = ("user", "expire_date")
    ordering = ("-expire_date",)

    @admin.display(description="session")
    def session_key_start(self, session: UserSession) -> str:
        return f"{session.session_key[:8]}…"

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False

    def has_change_permission(self, request: HttpRequest, obj: object = None) -> bool:
        return False
