"""The project statistics, read from the database in bulk, against an item-by-item count of the
same votes with statsmodels' Fleiss' kappa."""

import random
from collections import Counter

import numpy as np
import pytest
from statsmodels.stats.inter_rater import fleiss_kappa

from annotation.models import Perturbation, ValidationItem, ValidatorStatus, Vote
from annotation.validation.stats import project_stats
from tests.factories import ExampleFactory, ProjectFactory, UserFactory, submitted_perturbation

pytestmark = pytest.mark.django_db

LABELS = ["positive", "negative", "mixed"]


def expected_figures(project, items, votes):  # type: ignore[no-untyped-def]
    """Item by item, in plain Python: what project_stats must report."""
    counted = {item.pk: Counter() for item in items}
    for vote in votes:
        if vote.counts:
            counted[vote.item_id][vote.label] += 1
    voted = [item for item in items if counted[item.pk]]

    def kappa(rows):  # type: ignore[no-untyped-def]
        full = [[counted[i.pk][label] for label in LABELS] for i in rows]
        full = [row for row in full if sum(row) == 5]
        return round(float(fleiss_kappa(np.array(full))), 4) if full else None

    resolved = [i for i in items if i.status == "resolved"]
    accuracy = {}
    for kind, control in (("controls", True), ("perturbations", False)):
        rows = [i for i in resolved if (i.control_id is not None) == control and i.gold_label]
        right = sum(i.majority_label == i.gold_label for i in rows)
        accuracy[kind] = {
            "items": len(rows),
            "accuracy": round(right / len(rows), 4) if rows else None,
        }
    return {
        "kappa": kappa(voted),
        "per_split": {s: kappa([i for i in voted if i.split == s]) for s in ("dev", "test")},
        "votes": {label: sum(c[label] for c in counted.values()) for label in LABELS},
        "majority": {label: sum(i.majority_label == label for i in resolved) for label in LABELS},
        "votes_per_item": {
            str(k): sum(min(sum(counted[i.pk].values()), 5) == k for i in voted) for k in range(6)
        },
        "agreeing": Counter(
            str(counted[i.pk][i.majority_label]) for i in resolved if i.majority_label
        ),
        "human_accuracy": accuracy,
        "items": Counter(i.status for i in items),
    }


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_project_statistics_match_an_item_by_item_count(seed):
    rng = random.Random(seed)
    project = ProjectFactory(labels=LABELS[:2], extra_labels=LABELS[2:])
    validators = [UserFactory() for _ in range(8)]
    # One validator's votes stop counting: they are stored, and left out of every figure.
    ValidatorStatus.objects.create(project=project, validator=validators[7], qualified=False)
    items, votes = [], []
    for n in range(60):
        split = rng.choice(["dev", "test"])
        control = ExampleFactory(project=project, split=split) if n % 4 == 0 else None
        voters = rng.sample(validators, rng.choice([0, 2, 5, 5, 5, 6]))
        labels = [rng.choice(LABELS) for _ in voters]
        counted = [label for v, label in zip(voters, labels, strict=True) if v != validators[7]]
        top, top_n = Counter(counted).most_common(1)[0] if counted else ("", 0)
        complete = len(counted) >= 5
        item = ValidationItem.objects.create(
            project=project,
            control=control,
            external_id="" if control else f"x{n}",
            fields={"text": f"text {n}"},
            split=split,
            gold_label=rng.choice(["", *LABELS[:2]]) if not control else "positive",
            status="resolved"
            if complete
            else rng.choice(["open", "closed"] if not voters else ["open"]),
            # The item's counters, as the voting services keep them (test_label_votes.py)
            counted_votes=len(counted),
            label_votes=dict(Counter(counted)),
            majority_label=top if complete and top_n >= 3 else "",
        )
        items.append(item)
        votes += [
            Vote(item=item, validator=v, label=label, counts=v != validators[7], seconds_spent=3)
            for v, label in zip(voters, labels, strict=True)
        ]
    Vote.objects.bulk_create(votes)
    want = expected_figures(project, items, votes)

    stats = project_stats(project)

    assert stats["fleiss_kappa"] == want["kappa"]
    for split, kappa in want["per_split"].items():
        assert stats["per_split"][split]["fleiss_kappa"] == kappa
    assert stats["label_distribution"] == {"votes": want["votes"], "majority": want["majority"]}
    assert stats["votes_per_item"] == want["votes_per_item"]
    assert stats["agreement_histogram"] == dict(sorted(want["agreeing"].items()))
    assert stats["human_accuracy"] == want["human_accuracy"]
    assert stats["items"] == {s: want["items"].get(s, 0) for s in ("open", "resolved", "closed")}
    assert sum(v["votes"] for v in stats["validators"]) == len(votes)  # uncounted ones too


def test_the_median_seconds_per_perturbation_leaves_out_edits_with_no_time(project, people):
    """Imported edits carry 0 s (no time recorded): the dashboard's median is of timed edits."""
    made = [submitted_perturbation(project, people["expert"]) for _ in range(4)]
    assert project_stats(project)["median_seconds"]["perturbation"] is None
    Perturbation.objects.filter(pk__in=[made[0].pk, made[1].pk]).update(seconds_spent=12)
    Perturbation.objects.filter(pk=made[2].pk).update(seconds_spent=60)
    assert project_stats(project)["median_seconds"]["perturbation"] == 12
