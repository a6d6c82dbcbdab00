"""Domain errors and how they become HTTP responses."""

from django.core.exceptions import ValidationError as DjangoValidationError
from rest_framework.exceptions import ValidationError


def as_drf_error(error: DjangoValidationError) -> ValidationError:
    return ValidationError({"detail": " ".join(error.messages)})
