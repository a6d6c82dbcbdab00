from django.contrib import admin

from annotation.models import AuditLog, Example, Guidelines, ImportBatch, Membership, Project, Tag


class TagInline(admin.TabularInline):
    model = Tag
    extra = 0


class MembershipInline(admin.TabularInline):
    model = Membership
    extra = 0
    autocomplete_fields = ["user"]


@admin.register(Project)
class ProjectAdmin(admin.ModelAdmin):
    list_display = ["name", "slug", "task_type", "created_at"]
    search_fields = ["name", "slug"]
    inlines = [TagInline, MembershipInline]


@admin.register(Tag)
class TagAdmin(admin.ModelAdmin):
    list_display = ["name", "project", "target"]
    list_filter = ["project"]


@admin.register(Guidelines)
class GuidelinesAdmin(admin.ModelAdmin):
    list_display = ["project", "version", "created_by", "created_at"]
    list_filter = ["project"]


@admin.register(Membership)
class MembershipAdmin(admin.ModelAdmin):
    list_display = ["project", "user", "role"]
    list_filter = ["project", "role"]


@admin.register(ImportBatch)
class ImportBatchAdmin(admin.ModelAdmin):
    list_display = ["source_name", "project", "row_count", "created_by", "created_at"]
    list_filter = ["project"]


@admin.register(Example)
class ExampleAdmin(admin.ModelAdmin):
    list_display = ["external_id", "project", "label", "split"]
    list_filter = ["project", "split", "label"]
    search_fields = ["external_id"]

    def has_change_permission(self, request, obj=None):  # type: ignore[no-untyped-def]
        # Originals are never edited after import.
        return False


@admin.register(AuditLog)
class AuditLogAdmin(admin.ModelAdmin):
    list_display = ["created_at", "project", "actor", "action"]
    list_filter = ["project", "action"]

    def has_change_permission(self, request, obj=None):  # type: ignore[no-untyped-def]
        return False
