from django.contrib import admin
from django.db.models import QuerySet
from django.http import HttpRequest

from assessor.admin import PROVENANCE_FIELDS, redirect_to_single_download
from support.models import SupportLabel


@admin.register(SupportLabel)
class SupportLabelAdmin(admin.ModelAdmin):
    list_display = (
        "citation_id", "sentence_text", "method", "method_kind", "label", "shown_label", "made_by", "seconds_spent"
    )
    list_filter = ("method", "method_kind", "label", "shown_label")
    search_fields = (
        "citation__sentence__answer__topic__id",
        "citation__sentence__answer__run__run_id",
        "citation__segment__docid",
    )
    raw_id_fields = ("citation", "shown_from")
    readonly_fields = (*PROVENANCE_FIELDS, "shown_label", "shown_from")
    list_select_related = ("citation__sentence", "created_by", "imported_from")
    show_full_result_count = False
    actions = ("download_support", "download_support_scores")

    @admin.display(description="sentence")
    def sentence_text(self, label: SupportLabel) -> str:
        return label.citation.sentence.text[:120]

    def _methods(self, queryset: QuerySet[SupportLabel]) -> list[tuple[str]]:
        return [(method,) for method in queryset.order_by("method").values_list("method", flat=True).distinct()]

    @admin.action(description="Download the support labels of the selected labels' method")
    def download_support(self, request: HttpRequest, queryset: QuerySet[SupportLabel]):
        keys = self._methods(queryset)
        return redirect_to_single_download(self, request, keys, "collection:download_support", "method")

    @admin.action(description="Download the support scores of the selected labels' method")
    def download_support_scores(self, request: HttpRequest, queryset: QuerySet[SupportLabel]):
        keys = self._methods(queryset)
        return redirect_to_single_download(self, request, keys, "collection:download_support_scores", "method")
