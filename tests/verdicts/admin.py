from django.contrib import admin

from tests.verdicts.models import Verdict


@admin.register(Verdict)
class VerdictAdmin(admin.ModelAdmin):
    """A verdict is a record of who or what said it; the admin shows it, with its provenance, and changes nothing."""

    list_display = ("answer", "source", "label", "created_by", "job", "imported_from", "created_at")
    list_filter = ("label",)
    raw_id_fields = ("answer", "work")
    readonly_fields = [field.name for field in Verdict._meta.fields]
