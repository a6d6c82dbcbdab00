"""A keyword baseline shipped in the product: the demo's model (`make demo` scores the demo
release with it), and a `python` model to try the evaluation pages with. No torch."""

# fmt: off
POSITIVE = {
    "wonderful", "bright", "sturdy", "easy", "happily", "patient", "funny", "clever",
    "comfortable", "charming", "best", "enjoyed", "early", "faster", "care", "warm", "fresh",
    "generous", "new", "suspense", "apologised", "excellent", "moving",
}
# fmt: on


NEGATIONS = {"not", "never", "no", "nothing", "nobody"}


def _words(example: dict[str, str]) -> set[str]:
    return set(example["text"].lower().replace(",", " ").replace(".", " ").split())


def keyword(batch: list[dict[str, str]]) -> list[str]:
    """The demo's model: positive when a review holds a word from a small positive list."""
    return ["positive" if _words(e) & POSITIVE else "negative" for e in batch]


def keyword_with_negation(batch: list[dict[str, str]]) -> list[str]:
    """The keyword model, flipped when the review holds a negation: a second demo model."""
    return [
        ("negative" if label == "positive" else "positive") if _words(e) & NEGATIONS else label
        for e, label in zip(batch, keyword(batch), strict=True)
    ]
