"""A simulated crowd through the study link (issue 49): 40 participants on the IMDb contrast
sets (Gardner et al. 2020, test split: 488 perturbations, sent to validation), 10 of them
answering at random and 30 right 90% of the time, each labelling up to --items items through
the Validate page as a browser would (GET the page, POST the form). The same crowd, with the
same answers' randomness, runs twice: without the gates, and with a qualification test and
gold checks. Reports how many careless participants were stopped and after how many items,
how many good ones were stopped by mistake, and the share of accepted perturbations that the
careless ones decided (their counted votes were needed for the majority); beside it, the
server time of serving a gold item against a real one (median and 90th percentile, and their
difference; the statements each ran), and of a vote with and without gates.

    BENCH_DB=contrastlab_crowd .venv/bin/python benchmarks/crowd.py [--items 60] [--split test]
"""

import argparse
import json
import logging
import random
import re
import statistics
import time
from collections import Counter, defaultdict
from typing import Any

import numpy as np
from common import require_data
from seed import bench_database

CARELESS, GOOD, ACCURACY = 10, 30, 0.9
GATES = {
    "qualification_items": 5, "qualification_min_accuracy": 0.8, "qualification_attempts": 1,
    "gold_rate": 0.1, "gold_min_accuracy": 0.7, "gold_min_count": 5,
}  # fmt: skip
ITEM = re.compile(r'data-item="(\d+)"')
QUERIES: defaultdict[str, list[int]] = defaultdict(list)  # SQL statements per request


def build(split: str, slug: str, gates: bool) -> Any:
    """A project of the split's contrast sets, open for validation, and its study link."""
    from django.contrib.auth.models import User

    from annotation.crowd.services import studies
    from annotation.imports.published.services import import_published

    admin, _ = User.objects.get_or_create(username="crowd-admin", is_staff=True)
    folder = require_data("imdb-contrast")
    files = [(f"{split}_{kind}.tsv", (folder / f"{split}_{kind}.tsv").read_bytes())
             for kind in ("original", "contrast")]  # fmt: skip
    project = import_published(dataset="imdb", files=files, user=admin, slug=slug,
                               accept=False).project  # fmt: skip
    if gates:
        project.settings = {**project.settings, **GATES}
        project.save()
    study = studies.study_create(project=project, actor=admin, name="crowd", platform="prolific",
                                 items_per_participant=ARGS.items)  # fmt: skip
    return project, study


def truth(item_id: int) -> str:
    from annotation.models import GoldItem, ValidationItem

    gold = GoldItem.objects.filter(pk=item_id).values_list("gold_label", flat=True).first()
    if gold is not None:
        return str(gold)
    return str(ValidationItem.objects.values_list("gold_label", flat=True).get(pk=item_id))


def run(gates: bool) -> dict[str, Any]:
    from django.test import Client

    from annotation.models import GoldAnswer

    project, study = build(ARGS.split, f"crowd-{'gates' if gates else 'plain'}", gates)
    labels = project.labels
    rng = random.Random(ARGS.seed)  # the same crowd and the same coin flips in both runs
    people: list[dict[str, Any]] = [{"id": f"{n:024x}", "careless": n < CARELESS, "done": False,
               "client": Client(HTTP_HOST="127.0.0.1"), "rng": random.Random(rng.random())}
              for n in range(CARELESS + GOOD)]  # fmt: skip
    rng.shuffle(people)
    for p in people:
        query = {"PROLIFIC_PID": p["id"], "STUDY_ID": "bench", "SESSION_ID": p["id"]}
        p["client"].get(f"/p/{project.slug}/study/{study.token}/", query)
    QUERIES.clear()
    times: dict[str, list[float]] = {f"{what}_{kind}": [] for what in ("serve", "vote")
                                     for kind in ("test", "gold", "real")}  # fmt: skip
    while not all(p["done"] for p in people):  # one item each per round: the crowd at once
        for p in people:
            if not p["done"]:
                p["done"] = step(project, p, labels, times, GoldAnswer)
    return figures(project, people, times)


def step(project: Any, p: dict[str, Any], labels: list[str], times: Any, gold_answers: Any) -> bool:
    """One item for one participant; True once they are done (code page, or nothing served)."""
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    connection.queries_log.clear()  # the log keeps 9,000 at most: counts need room
    started = time.perf_counter()
    with CaptureQueriesContext(connection) as serve_queries:
        page = p["client"].get(f"/p/{project.slug}/validate/")
    served = time.perf_counter() - started
    found = ITEM.search(page.content.decode()) if page.status_code == 200 else None
    if found is None:
        return True
    item_id = int(found.group(1))
    right = truth(item_id)
    if p["careless"]:
        label = p["rng"].choice(labels)
    elif p["rng"].random() < ACCURACY:
        label = right
    else:
        label = p["rng"].choice([x for x in labels if x != right])
    connection.queries_log.clear()
    started = time.perf_counter()
    with CaptureQueriesContext(connection) as vote_queries:
        p["client"].post(f"/p/{project.slug}/validate/{item_id}/vote/", {"label": label})
    voted = time.perf_counter() - started
    mine = gold_answers.objects.filter(
        gold_item_id=item_id, validator__participant__external_id=p["id"]
    )
    phase = mine.order_by("-id").values_list("phase", flat=True)
    kind = {"qualification": "test", "gold": "gold"}.get(phase.first() or "", "real")
    times[f"serve_{kind}"].append(served)
    times[f"vote_{kind}"].append(voted)
    QUERIES[f"serve_{kind}"].append(len(serve_queries))
    QUERIES[f"vote_{kind}"].append(len(vote_queries))
    return False


def figures(project: Any, people: list[dict[str, Any]], times: Any) -> dict[str, Any]:
    from annotation.models import GoldAnswer, Participant, ValidatorStatus, Vote

    careless_users = set()
    stopped: dict[bool, list[int]] = {True: [], False: []}
    for p in people:
        user = Participant.objects.get(project=project, external_id=p["id"]).user_id
        if p["careless"]:
            careless_users.add(user)
        status = ValidatorStatus.objects.filter(project=project, validator_id=user).first()
        if status is not None and (status.paused or status.qualification == "failed"):
            answered = Vote.objects.filter(validator_id=user).count()
            answered += GoldAnswer.objects.filter(validator_id=user).count()
            stopped[p["careless"]].append(answered)
    accepted = project.items.filter(perturbation__status="accepted")
    decided = 0
    for item in accepted:
        good = Counter(
            label for label, voter in Vote.objects.filter(item=item, counts=True)
            .values_list("label", "validator_id") if voter not in careless_users
        )  # fmt: skip
        decided += good[item.majority_label] < project.setting("majority")
    resolved = project.perturbations.exclude(status="submitted").count()
    return {
        "careless_stopped": len(stopped[True]),
        "careless_stopped_after_items": sorted(stopped[True]),
        "good_stopped": len(stopped[False]),
        "perturbations": project.perturbations.count(),
        "resolved": resolved,
        "accepted": accepted.count(),
        "accepted_decided_by_careless": decided,
        "share_decided_by_careless": round(decided / accepted.count(), 4) if accepted else None,
        "counted_careless_votes": Vote.objects.filter(
            item__project=project, counts=True, validator_id__in=careless_users
        ).count(),
        "ms_median": {k: round(statistics.median(v) * 1000, 2) for k, v in times.items() if v},
        "queries_median": {k: statistics.median(v) for k, v in QUERIES.items() if v},
        "queries_range": {k: [min(v), max(v)] for k, v in QUERIES.items() if v},
        "gold_against_real": gold_against_real(times),
        "n": {k: len(v) for k, v in times.items()},
    }


def gold_against_real(times: dict[str, list[float]]) -> dict[str, Any]:
    """Server time of a page that serves a gold item against one that serves a real item, and
    of their answers: median and 90th percentile in ms, and gold's difference to real."""
    out: dict[str, Any] = {}
    for what in ("serve", "vote"):
        gold, real = times[f"{what}_gold"], times[f"{what}_real"]
        if not gold or not real:
            continue
        figures = {
            kind: {"median": _ms(values, 50), "p90": _ms(values, 90)}
            for kind, values in (("gold", gold), ("real", real))
        }
        figures["gold_minus_real"] = {
            q: round(figures["gold"][q] - figures["real"][q], 2) for q in ("median", "p90")
        }
        out[what] = figures
    return out


def _ms(values: list[float], q: int) -> float:
    return round(float(np.percentile(values, q)) * 1000, 2)


def main() -> None:
    bench_database(fresh=True)
    logging.getLogger("axes").setLevel(logging.WARNING)
    from annotation.crowd import gates, pool

    gates._random.seed(ARGS.seed)  # the gold draws (the pool's SQL order is PostgreSQL's own)
    pool._random.seed(ARGS.seed)
    if ARGS.only_gates:
        print(json.dumps({"with_gates": run(gates=True)}, indent=1))
        return
    plain = run(gates=False)
    gated = run(gates=True)
    ratios = {
        f"{what}_real_ms_gates_to_plain": round(
            gated["ms_median"][f"{what}_real"] / plain["ms_median"][f"{what}_real"], 3
        )
        for what in ("serve", "vote")
    }
    print(json.dumps({"without_gates": plain, "with_gates": gated, **ratios}, indent=1))


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--items", type=int, default=60, help="items per participant")
    parser.add_argument("--split", default="test", choices=["test", "dev"])
    parser.add_argument("--seed", type=int, default=49)
    parser.add_argument("--only-gates", action="store_true", help="the gated run alone")
    ARGS = parser.parse_args()
    main()
