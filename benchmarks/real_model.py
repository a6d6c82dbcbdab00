"""A real model through the whole product: import the IMDb contrast test sets as accepted
sets, publish a release, register the fine-tuned MiniLM (benchmarks/finetune_minilm.py) and
score it with the evaluation service. Prints the contrast metrics with their intervals.

    HF_HUB_OFFLINE=1 .venv/bin/python benchmarks/real_model.py
"""

import time

from common import OUT, require_data
from seed import bench_database


def main() -> None:
    model_dir = OUT / "minilm-cad"
    if not model_dir.exists():
        raise SystemExit("run benchmarks/finetune_minilm.py first")
    original = require_data("imdb-contrast", "test_original.tsv")
    contrast = require_data("imdb-contrast", "test_contrast.tsv")
    bench_database(fresh=False)
    from django.conf import settings

    from annotation.imports.paired import parse_paired_tsv
    from annotation.imports.services.sets import import_sets
    from annotation.models import Project
    from annotation.projects import services
    from annotation.releases.services import release_create
    from evaluation.runs.execute import run_evaluation
    from evaluation.runs.services import evaluation_enqueue
    from evaluation.specs.services import model_register

    settings.MEDIA_ROOT = OUT / "media"
    Project.objects.filter(slug="imdb-real").delete()
    project = services.project_create(
        user=None,
        name="IMDb contrast sets",
        slug="imdb-real",
        fields=[{"name": "text"}],
        labels=["Positive", "Negative"],
    )
    sets = parse_paired_tsv(
        project,
        original.read_bytes(),
        contrast.read_bytes(),
        mapping={"text": "Text", "label": "Sentiment"},
        split="test",
        source_name=original.name,
        tags=[],
    )
    import_sets(
        project=project,
        user=None,
        sets=sets,
        source_name=original.name,
        author="gardner2020",
        accept=True,
    )
    release = release_create(project=project, user=None, version=f"real-{time.time():.0f}")
    spec = model_register(
        project=project,
        user=None,
        name="minilm-cad",
        kind="hf-sequence-classification",
        source=str(model_dir),
        max_length=256,
        batch_size=32,
        device="cpu",
    )
    run = evaluation_enqueue(release=release, model=spec, split="test", user=None, send=False)
    finished = run_evaluation(run.pk)
    assert finished is not None and finished.status == "succeeded", finished and finished.error
    m = finished.metrics
    iv = m["intervals"]
    for name in ("original_accuracy", "perturbed_accuracy", "consistency"):
        low, high = iv[name]
        print(f"{name}: {100 * m[name]:.1f} (95% CI {100 * low:.1f}-{100 * high:.1f})")
    print(f"sets: {m['counts']['sets']}, examples/s: {m['examples_per_second']}")
    print("Gardner et al. (2020), BERT on IMDb: 93.8 originals, 84.2 contrasts, 77.8 consistency")


if __name__ == "__main__":
    main()
