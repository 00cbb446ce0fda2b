from django.contrib import admin
from django.db.models import QuerySet
from django.http import HttpRequest

from assessor.admin import PROVENANCE_FIELDS, redirect_to_single_download
from assignment.models import AssignmentLabel, RetiredAssignmentLabel


@admin.register(AssignmentLabel)
class AssignmentLabelAdmin(admin.ModelAdmin):
    list_display = (
        "answer", "nugget_text", "nugget_set_name", "assigner", "assigner_kind", "label", "made_by", "seconds_spent"
    )
    list_filter = ("assigner", "assigner_kind", "label", "nugget__nugget_set__name")
    search_fields = ("answer__topic__id", "answer__run__run_id", "nugget__text")
    raw_id_fields = ("answer", "nugget")
    readonly_fields = PROVENANCE_FIELDS
    list_select_related = ("answer__run", "nugget__nugget_set", "created_by", "imported_from")
    show_full_result_count = False
    actions = ("download_assignments", "download_scores")

    @admin.display(description="nugget")
    def nugget_text(self, label: AssignmentLabel) -> str:
        return label.nugget.text

    @admin.display(description="nugget set")
    def nugget_set_name(self, label: AssignmentLabel) -> str:
        return label.nugget.nugget_set.name

    def _conditions(self, queryset: QuerySet[AssignmentLabel]) -> list[tuple[str, str]]:
        pairs = queryset.order_by().values_list("nugget__nugget_set__name", "assigner").distinct()
        return sorted(set(pairs))

    @admin.action(description="Download the assignments of the selected labels' condition")
    def download_assignments(self, request: HttpRequest, queryset: QuerySet[AssignmentLabel]):
        keys = self._conditions(queryset)
        return redirect_to_single_download(self, request, keys, "collection:download_assignments", "condition")

    @admin.action(description="Download the scores of the selected labels' condition")
    def download_scores(self, request: HttpRequest, queryset: QuerySet[AssignmentLabel]):
        keys = self._conditions(queryset)
        return redirect_to_single_download(self, request, keys, "collection:download_scores", "condition")


@admin.register(RetiredAssignmentLabel)
class RetiredAssignmentLabelAdmin(admin.ModelAdmin):
    """The record of labels a change of their nugget took out of scoring: read only."""

    list_display = ("assigner", "nugget_text", "label", "reason", "retired_at")
    list_filter = ("reason",)
    raw_id_fields = ("answer", "nugget_set", "work")
    readonly_fields = [field.name for field in RetiredAssignmentLabel._meta.fields]
