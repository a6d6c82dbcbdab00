from django.contrib import admin

from evaluation.models import EvaluationRun, ModelSpec, Prediction


@admin.register(ModelSpec)
class ModelSpecAdmin(admin.ModelAdmin):
    list_display = ["name", "project", "kind", "source", "device"]
    list_filter = ["project", "kind"]
    exclude = ["api_key_encrypted"]  # a served model's key: never shown, set through the app


@admin.register(EvaluationRun)
class EvaluationRunAdmin(admin.ModelAdmin):
    list_display = ["id", "model", "release", "split", "status", "done", "total", "created_at"]
    list_filter = ["status"]


@admin.register(Prediction)
class PredictionAdmin(admin.ModelAdmin):
    list_display = ["run", "example", "role", "gold", "label"]
    list_filter = ["run"]
