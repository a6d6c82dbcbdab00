"""Form fields shared by the pages."""

from typing import Any

from django import forms

from annotation.text.parsing import strict_json_loads


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


def agreement_text(value: Any) -> str:
    """A minimum agreement as people type it: 3, or test=4 dev=3."""
    if isinstance(value, dict):
        return " ".join(f"{split}={n}" for split, n in value.items())
    return str(value)


class AgreementField(forms.CharField):
    """Votes with the majority a perturbation needs to be released, as typed on Settings and on
    the release form alike: '3' -> 3; 'test=4 dev=3' -> {'test': 4, 'dev': 3}."""

    def __init__(self, **kwargs: Any):
        kwargs.setdefault("max_length", 100)
        super().__init__(**kwargs)

    def clean(self, value: Any) -> Any:
        text = (super().clean(value) or "").strip()
        if not text and not self.required:
            return None
        if text.isascii() and text.isdigit():  # not "²", which int() refuses
            return int(text)
        pairs = [part.split("=", 1) for part in text.replace(",", " ").split()]
        if pairs and all(len(p) == 2 and p[1].isascii() and p[1].isdigit() for p in pairs):
            return {split.strip(): int(n) for split, n in pairs}
        raise forms.ValidationError(
            "write a number of votes, or split=number pairs, e.g. test=4 dev=3."
        )
