from django.contrib import admin
from django.db.models import QuerySet
from django.http import HttpRequest

from assessor.admin import PROVENANCE_FIELDS, download_link, redirect_to_single_download
from nuggets.models import GoldAnswer, Nugget, NuggetEdit, NuggetSet


class NuggetInline(admin.TabularInline):
    model = Nugget
    fields = ("position", "text", "importance", "origin")
    extra = 0
    show_change_link = True


@admin.register(NuggetSet)
class NuggetSetAdmin(admin.ModelAdmin):
    list_display = ("topic", "name", "kind", "status", "made_by", "created_at", "seconds_spent", "download")
    list_filter = ("kind", "status", "name")
    search_fields = ("topic__id", "name")
    raw_id_fields = ("topic", "drafts")
    readonly_fields = (*PROVENANCE_FIELDS, "version")
    list_select_related = ("topic", "created_by", "imported_from")
    inlines = (NuggetInline,)
    actions = ("download_nuggets",)

    @admin.display(description="all sets of this name")
    def download(self, nugget_set: NuggetSet) -> str:
        return download_link("collection:download_nuggets", nugget_set.name)

    @admin.action(description="Download the nuggets of the selected sets' name")
    def download_nuggets(self, request: HttpRequest, queryset: QuerySet[NuggetSet]):
        keys = [(name,) for name in queryset.order_by("name").values_list("name", flat=True).distinct()]
        return redirect_to_single_download(self, request, keys, "collection:download_nuggets", "nugget set name")


@admin.register(Nugget)
class NuggetAdmin(admin.ModelAdmin):
    list_display = ("text", "importance", "nugget_set", "position", "origin", "made_by")
    list_filter = ("importance", "origin", "nugget_set__kind", "nugget_set__name")
    search_fields = ("text", "nugget_set__topic__id")
    raw_id_fields = ("nugget_set", "source_segment", "derived_from")
    readonly_fields = PROVENANCE_FIELDS
    list_select_related = ("nugget_set", "created_by", "imported_from")
    show_full_result_count = False


@admin.register(GoldAnswer)
class GoldAnswerAdmin(admin.ModelAdmin):
    list_display = ("text", "nugget", "position", "documents")
    search_fields = ("text", "nugget__text", "nugget__nugget_set__topic__id")
    raw_id_fields = ("nugget",)
    list_select_related = ("nugget",)
    show_full_result_count = False


@admin.register(NuggetEdit)
class NuggetEditAdmin(admin.ModelAdmin):
    list_display = ("nugget_set", "at", "user", "operation", "set_version", "undone")
    list_filter = ("operation", "undone")
    search_fields = ("nugget_set__topic__id", "user__username")
    raw_id_fields = ("nugget_set",)
    list_select_related = ("nugget_set", "user")
    # The edit log is the lineage of the nuggets: a record, never edited.
    readonly_fields = ("nugget_set", "at", "user", "operation", "before", "after", "set_version", "undone")
    show_full_result_count = False
