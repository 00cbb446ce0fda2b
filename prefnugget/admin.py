from django.contrib import admin

from prefnugget.models import QuestionOrigin


@admin.register(QuestionOrigin)
class QuestionOriginAdmin(admin.ModelAdmin):
    list_display = ("nugget_id", "job_id", "batch", "pair", "position", "winner_id", "loser_id", "llm_call_id")
    search_fields = ("nugget__text", "job__output_name")
    raw_id_fields = ("nugget", "job", "llm_call", "winner", "loser")
    show_full_result_count = False
