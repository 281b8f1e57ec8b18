"""Citation references and numeric handles of runs, read-only in the admin."""

from django.contrib import admin

from citations.models import CitationReference, NumericHandle
from foundation.admin_mixins import ReadOnlyAdmin


@admin.register(CitationReference)
class CitationReferenceAdmin(ReadOnlyAdmin):
    list_display = ("id", "run", "ordinal", "title", "version", "document", "chunk", "created_at")
    list_select_related = ("run", "version__knowledge", "document", "chunk")
    search_fields = ("id", "run__id", "title")
    raw_id_fields = ()


@admin.register(NumericHandle)
class NumericHandleAdmin(ReadOnlyAdmin):
    list_display = ("id", "run", "ordinal", "fact", "version", "citation", "created_at")
    list_select_related = ("run", "fact", "version__knowledge", "citation")
    search_fields = ("id", "run__id")
