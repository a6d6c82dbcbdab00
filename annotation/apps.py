from django.apps import AppConfig
from django.urls import register_converter

from annotation.text.parsing import IdConverter


class AnnotationConfig(AppConfig):
    name = "annotation"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        # Before any URLconf is loaded: `<id:pk>` takes ids that fit the database.
        register_converter(IdConverter, "id")
