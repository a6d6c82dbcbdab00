"""A keyword baseline shipped in the product: the demo's model (`make demo` scores the demo
release with it), and a `python` model to try the evaluation pages with. No torch."""

# fmt: off
POSITIVE = {
    "wonderful", "bright", "sturdy", "easy", "happily", "patient", "funny", "clever",
    "comfortable", "charming", "best", "enjoyed", "early", "faster", "care", "warm", "fresh",
    "generous", "new", "suspense", "apologised", "excellent", "moving",
}
# fmt: on


def keyword(batch: list[dict[str, str]]) -> list[str]:
    """The demo's model: positive when a review holds a word from a small positive list."""
    words = [set(example["text"].lower().replace(",", " ").replace(".", " ").split())
             for example in batch]  # fmt: skip
    return ["positive" if w & POSITIVE else "negative" for w in words]
