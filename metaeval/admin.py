from django.contrib import admin
from django.http import HttpRequest

from metaeval.models import ImportedScore, KeptComparison, ScoreTable, Study


@admin.register(ScoreTable)
class ScoreTableAdmin(admin.ModelAdmin):
    list_display = ("name", "created_at", "imported_from")
    search_fields = ("name",)
    readonly_fields = ("created_at", "imported_from")
    list_select_related = ("imported_from",)


@admin.register(ImportedScore)
class ImportedScoreAdmin(admin.ModelAdmin):
    list_display = ("table", "run_id", "topic_id", "metric", "value")
    list_filter = ("table", "metric")
    search_fields = ("run_id", "topic_id")
    raw_id_fields = ("table",)
    list_select_related = ("table",)
    show_full_result_count = False


@admin.register(Study)
class StudyAdmin(admin.ModelAdmin):
    list_display = ("name", "family", "source_a", "source_b", "k", "seed", "created_by", "created_at")
    list_filter = ("family",)
    search_fields = ("name",)
    readonly_fields = ("sample", "created_by", "created_at")
    raw_id_fields = ("source_a", "source_b", "judge", "assessor", "llm_job")
    list_select_related = ("source_a", "source_b", "created_by")


@admin.register(KeptComparison)
class KeptComparisonAdmin(admin.ModelAdmin):
    """Kept comparisons are computed from the sources (metaeval.comparison_page): read, or deleted to be
    computed again on their next view; never edited."""

    list_display = ("__str__", "computed_at", "seconds", "viewed_at", "queued_at")
    fields = ("key", "query", "stamp_a", "stamp_b", "computed_at", "seconds", "viewed_at", "queued_at")
    readonly_fields = fields
    ordering = ("-viewed_at",)

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False

    def has_change_permission(self, request: HttpRequest, obj=None) -> bool:
        return False
