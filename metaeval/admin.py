from django.contrib import admin

from metaeval.models import ImportedScore, ScoreTable, Study


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
