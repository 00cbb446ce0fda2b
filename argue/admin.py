from django.contrib import admin

from argue.models import AnswerAttestation, ArgueWork, JudgedReport, SupportAttestation, UncitedAttestation
from assessor.admin import PROVENANCE_FIELDS


@admin.register(JudgedReport)
class JudgedReportAdmin(admin.ModelAdmin):
    list_display = ("answer_id", "source", "bank", "kept", "check_all", "negatives", "malformed", "made_by", "work_id")
    list_filter = ("bank", "check_all", "negatives")
    search_fields = ("answer__topic__id", "answer__run__run_id", "source__name")
    raw_id_fields = ("source", "answer", "work")
    readonly_fields = PROVENANCE_FIELDS
    show_full_result_count = False


@admin.register(SupportAttestation)
class SupportAttestationAdmin(admin.ModelAdmin):
    list_display = ("citation_id", "source", "label", "made_by", "work_id", "seconds_spent")
    list_filter = ("label",)
    search_fields = ("citation__sentence__answer__topic__id", "citation__segment__docid", "source__name")
    raw_id_fields = ("source", "citation", "work")
    readonly_fields = PROVENANCE_FIELDS
    show_full_result_count = False


@admin.register(AnswerAttestation)
class AnswerAttestationAdmin(admin.ModelAdmin):
    list_display = ("sentence_id", "question_id", "answer_index", "source", "label", "made_by", "work_id")
    list_filter = ("label",)
    search_fields = ("sentence__answer__topic__id", "source__name", "question__text")
    raw_id_fields = ("source", "sentence", "question", "work")
    readonly_fields = PROVENANCE_FIELDS
    show_full_result_count = False


@admin.register(UncitedAttestation)
class UncitedAttestationAdmin(admin.ModelAdmin):
    list_display = ("sentence_id", "asked", "source", "label", "made_by", "work_id", "seconds_spent")
    list_filter = ("asked", "label")
    search_fields = ("sentence__answer__topic__id", "source__name")
    raw_id_fields = ("source", "sentence", "work")
    readonly_fields = PROVENANCE_FIELDS
    show_full_result_count = False


@admin.register(ArgueWork)
class ArgueWorkAdmin(admin.ModelAdmin):
    list_display = ("work_id", "bank", "check_all", "negatives")
    raw_id_fields = ("work",)
