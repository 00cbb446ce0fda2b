from django.contrib import admin

from grades.models import GradeLabel


@admin.register(GradeLabel)
class GradeLabelAdmin(admin.ModelAdmin):
    list_display = ("topic_id", "answer_id", "nugget_id", "label", "source", "job_id", "work_id", "created_at")
    list_filter = ("label",)
    search_fields = ("topic__id", "source__name", "answer__run__run_id")
    raw_id_fields = ("source", "topic", "answer", "nugget", "job", "work", "imported_from", "created_by")
    show_full_result_count = False
