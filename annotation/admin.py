from typing import Any

from django import forms
from django.contrib import admin
from django.contrib.auth import get_user_model
from django.contrib.auth.admin import UserAdmin
from django.contrib.auth.forms import UserChangeForm

from annotation.errors import DomainError
from annotation.models import (
    AccountOrigin,
    AuditLog,
    Example,
    Guidelines,
    ImportBatch,
    Membership,
    Project,
    Tag,
)
from annotation.projects.services import project_rules


class ProjectAdminForm(forms.ModelForm):
    """The same rules, with the same messages, as the API and the settings page."""

    class Meta:
        model = Project
        fields = ["name", "slug", "task_type", "fields", "labels", "extra_labels", "settings"]

    def __init__(self, *args: Any, **kwargs: Any):
        super().__init__(*args, **kwargs)
        for name in ("labels", "extra_labels", "settings"):
            self.fields[name].required = False  # a free-text project has no labels
        if not self.instance.pk:
            self.initial.update(
                fields=[{"name": "text", "kind": "text", "editable": True}],
                labels=[],
                extra_labels=[],
                settings={},
            )

    def clean(self) -> dict[str, Any]:
        super().clean()
        data = self.cleaned_data
        if self.errors:
            return data
        try:
            values = project_rules(
                task_type=data.get("task_type"),
                fields=data.get("fields"),
                labels=data.get("labels") or [],
                extra_labels=data.get("extra_labels") or [],
                settings=data.get("settings") or {},
                before=Project.objects.filter(pk=self.instance.pk).first(),
            )
        except DomainError as error:
            raise forms.ValidationError(error.message) from None
        return {**data, **values}


class TagInline(admin.TabularInline):
    model = Tag
    extra = 0


class MembershipInline(admin.TabularInline):
    model = Membership
    extra = 0
    autocomplete_fields = ["user"]


@admin.register(Project)
class ProjectAdmin(admin.ModelAdmin):
    form = ProjectAdminForm
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


@admin.register(AccountOrigin)
class AccountOriginAdmin(admin.ModelAdmin):
    """Deleting a row vouches for the account: it may then join other projects."""

    list_display = ["user", "created_by_name", "project_slug", "created_at"]
    search_fields = ["user__username", "user__email", "created_by_name", "project_slug"]

    def has_change_permission(self, request, obj=None):  # type: ignore[no-untyped-def]
        return False


class AccountChangeForm(UserChangeForm):
    """Usernames and e-mails are unique without regard to case (migration 0018): a clash is
    the form's error, not the database's 500."""

    def _unique(self, field: str) -> str:
        value = self.cleaned_data.get(field) or ""
        others = type(self.instance).objects.exclude(pk=self.instance.pk)
        if value and others.filter(**{f"{field}__iexact": value}).exists():
            raise forms.ValidationError(f"Another account has this {field} (case is ignored).")
        return value

    def clean_username(self) -> str:
        return self._unique("username")

    def clean_email(self) -> str:
        return self._unique("email")


class AccountAdmin(UserAdmin):
    form = AccountChangeForm


admin.site.unregister(get_user_model())
admin.site.register(get_user_model(), AccountAdmin)
