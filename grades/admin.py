from django.contrib import admin

from grades.models import GradeLabel, RetiredGradeLabel


@admin.register(GradeLabel)
class GradeLabelAdmin(admin.ModelAdmin):
    list_display = ("topic_id", "answer_id", "nugget_id", "label", "source", "job_id", "work_id", "created_at")
    list_filter = ("label",)
    search_fields = ("topic__id", "source__name", "answer__run__run_id")
    raw_id_fields = ("source", "topic", "answer", "nugget", "job", "work", "imported_from", "created_by")
    show_full_result_count = False


@admin.register(RetiredGradeLabel)
class RetiredGradeLabelAdmin(admin.ModelAdmin):
    list_display = ("answer_id", "nugget_id", "label", "source", "reason", "made_by", "retired_at")
    list_filter = ("reason",)
    search_fields = ("source__name", "nugget_text")
    raw_id_fields = ("answer", "nugget_set", "source", "work")
    show_full_result_count = False
