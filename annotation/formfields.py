"""Form fields shared by the pages."""

from typing import Any

from django import forms

from config.edge import strict_json_loads


class JSONObjectField(forms.CharField):
    """A JSON object typed into a text box; empty means `empty_value`. Refuses anything but an
    object (a mapping, a set of proportions), NaN included."""

    def __init__(self, *, empty_value: Any = None, **kwargs: Any):
        super().__init__(required=False, **kwargs)
        self.empty = empty_value

    def clean(self, value: Any) -> Any:
        raw = (super().clean(value) or "").strip()
        if not raw:
            return self.empty
        try:
            parsed = strict_json_loads(raw)
        except ValueError as error:
            raise forms.ValidationError(f"not valid JSON: {error}.") from None
        if not isinstance(parsed, dict):
            raise forms.ValidationError('this must be a JSON object, e.g. {"key": "value"}.')
        return parsed
