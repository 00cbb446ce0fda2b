from django.contrib import admin

from reports.models import ReportDocument, ReportLayout, ReportRequest


@admin.register(ReportRequest)
class ReportRequestAdmin(admin.ModelAdmin):
    list_display = ("topic_id", "title", "limit", "word_limit", "imported_from")
    search_fields = ("topic__id", "title")
    raw_id_fields = ("topic", "imported_from")


@admin.register(ReportLayout)
class ReportLayoutAdmin(admin.ModelAdmin):
    list_display = ("answer_id", "team_id", "shape", "sentences_key", "references_given", "imported_from")
    list_filter = ("shape", "sentences_key")
    search_fields = ("answer__run__run_id", "answer__topic__id", "team_id")
    raw_id_fields = ("answer", "imported_from")
    show_full_result_count = False


@admin.register(ReportDocument)
class ReportDocumentAdmin(admin.ModelAdmin):
    list_display = ("answer_id", "segment_id", "title")
    search_fields = ("answer__run__run_id", "answer__topic__id", "segment__docid")
    raw_id_fields = ("answer", "segment")
    show_full_result_count = False
