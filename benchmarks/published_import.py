"""Importing a published contrast set in one step (issue 29) at DROP's size and ten times it:
DROP's test set as the originals' file (the whole of it, most questions never perturbed) and
its contrast file, read and imported by `import_published`, against the same sets imported
through the generic sets.jsonl path (what a user had to write a converter for before), in the
same run. DROP is the largest of the nine: 623 sets, 947 perturbations, ~9,600 originals.

    .venv/bin/python benchmarks/published_import.py [--scale 1]

This is in-process. A set import through the API and its worker, against Label Studio's rate
(issue 50: 20k real IMDb contrast pairs, and 10x), is `originals_import.py --api --kinds sets`.
"""

import argparse
import json
import random
import time
from typing import Any

from seed import bench_database, text


def drop_files(scale: int, rng: random.Random) -> tuple[bytes, bytes, bytes]:
    """DROP-shaped originals and contrast files, and the same sets as sets.jsonl."""
    passages, per_passage = 600 * scale, 16
    originals: dict[str, dict] = {}
    contrast: dict[str, dict] = {}
    lines = []
    perturbed = set(rng.sample(range(passages * per_passage), 623 * scale))
    extra = set(rng.sample(sorted(perturbed), 324 * scale))  # 947 perturbations over 623 originals
    for p in range(passages):
        passage = text(rng, 220)
        qas: list[dict[str, Any]] = []
        for q in range(per_passage):
            n = p * per_passage + q
            answer = {"number": str(n % 97), "date": {"day": "", "month": "", "year": ""},
                      "spans": []}  # fmt: skip
            qas.append({"question": f"How many {text(rng, 8)}?", "query_id": f"q{n}",
                        "answer": answer})  # fmt: skip
        originals[f"history_{p}"] = {"passage": passage, "qa_pairs": qas}
        mine = [qa for n, qa in enumerate(qas, p * per_passage) if n in perturbed]
        pairs = []
        for qa in mine:
            n = int(qa["query_id"][1:])
            set_line: dict[str, Any] = {"set_id": qa["query_id"], "split": "test", "original": {
                "id": qa["query_id"], "fields": {"passage": passage, "question": qa["question"]},
                "answers": [qa["answer"]["number"]]}, "perturbations": []}  # fmt: skip
            for k in range(1, 3 if n in extra else 2):
                spans = [text(rng, 2), text(rng, 2)] if k == 2 else []
                number = "" if spans else str(n % 89)
                pair = {"question": f"How many {text(rng, 8)} then?", "query_id":
                        f"{qa['query_id']}_{k}", "answer": {"number": number, "spans": spans,
                        "date": {"day": "", "month": "", "year": ""}}}  # fmt: skip
                pairs.append(pair)
                set_line["perturbations"].append({
                    "id": pair["query_id"], "fields": {"passage": passage,
                    "question": pair["question"]}, "answers": [spans or number],
                    "tags": ["gardner-2020"]})  # fmt: skip
            lines.append(json.dumps(set_line))
        if pairs:
            contrast[f"history_{p}"] = {"passage": passage, "qa_pairs": pairs}
    return (json.dumps(originals).encode(), json.dumps(contrast).encode(),
            "\n".join(lines).encode())  # fmt: skip


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--scale", type=int, default=1, help="1: DROP's size; 10: ten times")
    args = parser.parse_args()
    bench_database(fresh=True)
    from django.conf import settings

    from annotation.imports.published.datasets import DATASETS
    from annotation.imports.published.services import import_published
    from annotation.imports.services.sets import import_sets, parse_sets_jsonl
    from annotation.projects.services import project_create

    settings.IMPORT_MAX_BYTES = 1 << 31
    settings.IMPORT_MAX_ROWS = 1 << 31
    originals, contrast, sets_jsonl = drop_files(args.scale, random.Random(0))
    mb = (len(originals) + len(contrast)) / 1e6
    print(f"scale {args.scale}: originals file {len(originals) / 1e6:.1f} MB, contrast file "
          f"{len(contrast) / 1e6:.1f} MB; sets.jsonl {len(sets_jsonl) / 1e6:.1f} MB")  # fmt: skip

    started = time.perf_counter()
    result = import_published(dataset="drop", files=[("drop_dataset_test.json", originals),
                              ("drop_contrast_sets_test.json", contrast)], user=None)  # fmt: skip
    published = time.perf_counter() - started
    print(f"import_published: {result.summary()}")

    spec = DATASETS["drop"].template()
    baseline = project_create(user=None, slug="generic", **spec)
    started = time.perf_counter()
    sets = parse_sets_jsonl(baseline, sets_jsonl, ["gardner-2020"])
    done = import_sets(project=baseline, user=None, sets=sets, source_name="sets.jsonl",
                       accept=True)  # fmt: skip
    generic = time.perf_counter() - started
    assert done.created == result.created, (done.created, result.created)
    print(f"published, one step: {published:.2f} s ({mb / published:.1f} MB/s of DROP's files)")
    print(f"generic sets.jsonl:  {generic:.2f} s (baseline, same sets)")
    print(f"ratio published/generic: {published / generic:.2f}x")


if __name__ == "__main__":
    main()
