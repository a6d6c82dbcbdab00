"""Annotation artifacts in perturbed texts (Gardner et al., 2021; DynaSent; docs/analyses.md).

- `tokens`: single tokens whose label distribution departs from uniform. A token's count n is
  the number of perturbed texts that contain it (not its occurrences); p_hat is the share of those
  texts with a label; p0 = 1/(number of labels); z = (p_hat - p0) / sqrt(p0(1 - p0)/n), one-sided.
  A (token, label) is listed when p_hat > p0 and z exceeds the Bonferroni threshold at alpha = 0.05
  with m = the number of distinct tokens.
- `edit_only`: a bag-of-words logistic regression that sees only the words each edit inserted,
  5-fold cross-validated, beside the majority-label share.
- `authors`: for each author, the share of their edits that repeat their most frequent edit
  pattern (the words removed and the words inserted).
"""

import math
import re
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from statistics import NormalDist
from typing import Any

import numpy as np

TOKEN = re.compile(r"[^\W\d_]+")
ALPHA = 0.05
FOLDS = 5


@dataclass(frozen=True)
class Edit:
    original: str
    perturbed: str
    label: str
    author: str


def tokens_of(text: str) -> list[str]:
    """str.lower(), then maximal runs of Unicode letters: "don't" gives "don", "t"."""
    return TOKEN.findall(text.lower())


def token_artifacts(texts: Sequence[str], labels: Sequence[str], n_labels: int) -> list[dict]:
    p0 = 1 / n_labels
    containing: dict[str, Counter[str]] = {}
    for text, label in zip(texts, labels, strict=True):
        for token in set(tokens_of(text)):
            containing.setdefault(token, Counter())[label] += 1
    if not containing:
        return []
    threshold = NormalDist().inv_cdf(1 - ALPHA / len(containing))
    rows = []
    for token, per_label in containing.items():
        n = sum(per_label.values())
        for label, count in per_label.items():
            share = count / n
            z = (share - p0) / math.sqrt(p0 * (1 - p0) / n)
            if share > p0 and z > threshold:
                rows.append({"token": token, "label": label, "count": n, "p_label": share, "z": z})
    return sorted(rows, key=lambda row: (-row["z"], row["token"]))


def inserted_words(original: str, perturbed: str) -> list[str]:
    """The tokens an edit inserted, by a multiset difference of tokens."""
    before = Counter(tokens_of(original))
    return list((Counter(tokens_of(perturbed)) - before).elements())


def edit_pattern(edit: Edit) -> tuple[tuple[str, ...], tuple[str, ...]]:
    before, after = Counter(tokens_of(edit.original)), Counter(tokens_of(edit.perturbed))
    return tuple(sorted((before - after).elements())), tuple(sorted((after - before).elements()))


def edit_only(edits: Sequence[Edit], seed: int = 0) -> dict[str, Any]:
    """Cross-validated accuracy of a classifier that reads only the inserted words."""
    labels = [e.label for e in edits]
    counts = Counter(labels)
    majority = max(counts.values()) / len(labels) if labels else None
    if len(edits) < FOLDS or len(counts) < 2:
        return {"accuracy": None, "majority": majority, "folds": FOLDS}
    # Imported here: scikit-learn takes over a second to import, and the web process, which
    # queues analyses, never runs one.
    from sklearn.feature_extraction.text import CountVectorizer
    from sklearn.linear_model import LogisticRegression
    from sklearn.model_selection import KFold, cross_val_score
    from sklearn.pipeline import make_pipeline

    documents = [" ".join(inserted_words(e.original, e.perturbed)) or "_none_" for e in edits]
    model = make_pipeline(
        CountVectorizer(analyzer=lambda doc: doc.split()), LogisticRegression(max_iter=1000)
    )
    folds = KFold(n_splits=FOLDS, shuffle=True, random_state=seed)
    scores = cross_val_score(model, documents, labels, cv=folds, error_score=np.nan)
    accuracy = float(np.nanmean(scores)) if not np.isnan(scores).all() else None
    return {"accuracy": accuracy, "majority": majority, "folds": FOLDS}


def author_repetition(edits: Sequence[Edit]) -> list[dict[str, Any]]:
    by_author: dict[str, Counter] = {}
    for edit in edits:
        by_author.setdefault(edit.author, Counter())[edit_pattern(edit)] += 1
    rows = []
    for author, patterns in sorted(by_author.items()):
        (removed, inserted), top = patterns.most_common(1)[0]
        total = sum(patterns.values())
        rows.append(
            {
                "author": author,
                "edits": total,
                "share": top / total,
                "pattern": {"removed": list(removed), "inserted": list(inserted)},
            }
        )
    return rows


def artifacts(edits: Sequence[Edit], n_labels: int) -> dict[str, Any]:
    return {
        "tokens": token_artifacts([e.perturbed for e in edits], [e.label for e in edits], n_labels),
        "edit_only": edit_only(edits),
        "authors": author_repetition(edits),
        "texts": len(edits),
    }
