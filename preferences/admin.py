from django.contrib import admin

from preferences.models import PreferenceLabel


@admin.register(PreferenceLabel)
class PreferenceLabelAdmin(admin.ModelAdmin):
    list_display = ("topic_id", "first_id", "second_id", "label", "source", "job_id", "work_id", "created_at")
    list_filter = ("label",)
    search_fields = ("topic__id", "source__name", "first__run__run_id", "second__run__run_id")
    raw_id_fields = ("source", "topic", "first", "second", "job", "work", "imported_from")
    show_full_result_count = False
