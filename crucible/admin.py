from django.contrib import admin

from crucible.models import Chunk, CrucibleRun, Extraction, KnownConfidence


@admin.register(CrucibleRun)
class CrucibleRunAdmin(admin.ModelAdmin):
    list_display = ("run_name", "job_id", "bank", "variant", "per_question", "run", "error")
    list_filter = ("variant",)
    search_fields = ("run_name", "bank")
    raw_id_fields = ("job", "run", "made_from")


@admin.register(Chunk)
class ChunkAdmin(admin.ModelAdmin):
    list_display = ("job_id", "topic_id", "rank", "segment_id")
    search_fields = ("topic__id", "segment__docid")
    raw_id_fields = ("job", "topic", "segment")
    show_full_result_count = False


@admin.register(Extraction)
class ExtractionAdmin(admin.ModelAdmin):
    list_display = ("job_id", "chunk_id", "question", "confidence", "no_answer", "condensed_sentence")
    list_filter = ("no_answer",)
    raw_id_fields = ("job", "chunk")
    show_full_result_count = False


@admin.register(KnownConfidence)
class KnownConfidenceAdmin(admin.ModelAdmin):
    list_display = ("cache_key", "confidence")
    search_fields = ("cache_key",)
    show_full_result_count = False
