"""`python` model specs used by the tests: plain callables over lists of field dicts."""

import random
import time


def keyword(batch: list[dict[str, str]]) -> list[str]:
    """A rule-based sentiment model: 'bad' means negative."""
    return ["negative" if "bad" in fields["text"] else "positive" for fields in batch]


def keyword_with_probabilities(batch: list[dict[str, str]]) -> tuple[list[str], list[dict]]:
    labels = keyword(batch)
    return labels, [{label: 1.0} for label in labels]


def slow_keyword(batch: list[dict[str, str]]) -> list[str]:
    """Slow enough that a test can kill the worker in the middle of a run."""
    time.sleep(1.0)
    return keyword(batch)


def unknown_labels(batch: list[dict[str, str]]) -> list[str]:
    return ["LABEL_7"] * len(batch)


def broken(batch: list[dict[str, str]]) -> list[str]:
    raise RuntimeError("the rule engine is broken")


NEGATIVE_WORDS = ["bad", "worst", "awful", "boring", "waste", "terrible", "poor", "stupid",
                  "dull", "horrible", "mess", "nothing"]  # fmt: skip


def _lexicon(seed: int):  # type: ignore[no-untyped-def]
    """A rule model with its own seeded half of the negative words: six of them stand in for
    six training seeds of one model."""
    words = random.Random(seed).sample(NEGATIVE_WORDS, 6)

    def predict(batch: list[dict[str, str]]) -> list[str]:
        return [
            "negative" if any(w in fields["text"].lower() for w in words) else "positive"
            for fields in batch
        ]

    return predict


lexicon_0, lexicon_1, lexicon_2, lexicon_3, lexicon_4, lexicon_5 = map(_lexicon, range(6))


def years_and_names(batch: list[dict[str, str]]) -> list[str]:
    """A rule-based reader for the QA tests: 'when' questions get the context's first year,
    others its first two capitalised words after the first sentence."""
    answers = []
    for fields in batch:
        words = fields["context"].replace(".", " ").split()
        if fields["question"].lower().startswith("when"):
            answers.append(next(w for w in words if w.isdigit()))
        else:
            second = fields["context"].split(". ", 1)[1].split()
            answers.append(" ".join(second[:2]))
    return answers


def always_positive(batch: list[dict[str, str]]) -> list[str]:
    """A model that does not read its input: one label, whatever the text."""
    return ["positive"] * len(batch)


def first_word(batch: list[dict[str, str]]) -> list[str]:
    """A reader that answers every question with its context's first word."""
    return [fields["context"].split()[0] for fields in batch]
