"""The dataset card (README.md) of a release, in Markdown."""

import io
import json
from typing import Any

from django.utils import timezone

from annotation.models import Project, Release
from annotation.releases.bundle import EXAMPLES_FILE, SETS_FILE
from annotation.releases.exports import hub_header, plain_docs, task_prefix
from annotation.text.answers import AnswerRules


def dataset_card(project: Project, release: Release) -> str:
    counts, stats, options = release.counts, release.statistics, release.options
    splits = sorted(counts["sets"])
    out = io.StringIO()
    w = out.write
    w(hub_header(splits))
    w(f"# {project.name}: contrast sets, release {release.version}\n\n")
    w(f"Created {timezone.localtime(release.created_at):%Y-%m-%d} with ContrastLab. ")
    free = project.is_free_text
    truth, key = ("answers", "answers_changed") if free else ("gold label", "label_changed")
    them = "them" if free else "it"
    changed = counts.get("label_changed", {})
    kept = sum(counts["perturbations"].values()) - sum(changed.values())
    w("Each contrast set is an original test example (the pivot) and expert edits of it. ")
    if kept:
        w(f"{sum(changed.values())} perturbations change the {truth} and {kept} keep {them} ")
        w(f"(`{key}` in the data). ")
    else:
        w(f"Every perturbation changes the {truth}. ")
    if stats.get("validators"):
        w(f"Perturbations were validated blind by {project.setting('votes_per_item')} ")
        w("validators unless noted.\n\n")
    else:
        w("No perturbation was validated in ContrastLab: they were imported as accepted.\n\n")
    w("## Counts\n\n| split | sets | perturbations | label changed | label kept |\n")
    w("|---|---|---|---|---|\n")
    for split in splits:
        n, moved = counts["perturbations"].get(split, 0), changed.get(split, 0)
        w(f"| {split} | {counts['sets'][split]} | {n} | {moved} | {n - moved} |\n")
    if alone := sum(counts.get("sets_of_one", {}).values()):
        w(
            f"\n{alone} of the sets are an original alone, as the dataset publishes them (a set of "
            "one: consistent when its original is right).\n"
        )
    if waiting := counts.get("waiting_for_answer"):
        w(f"\n{len(waiting)} set(s) are left out: their original waits for its answer.\n")
    if not free:
        w("\n### Labels of perturbations\n\n| split | " + " | ".join(project.labels) + " |\n")
        w("|---|" + "---|" * len(project.labels) + "\n")
        for split in splits:
            row = [str(counts["labels"].get(split, {}).get(label, 0)) for label in project.labels]
            w(f"| {split} | " + " | ".join(row) + " |\n")
    tags = sorted({tag for per in counts["tags"].values() for tag in per})
    if tags:
        w("\n### Tags\n\n| tag | " + " | ".join(splits) + " |\n|---|" + "---|" * len(splits) + "\n")
        for tag in tags:
            row = [str(counts["tags"].get(split, {}).get(tag, 0)) for split in splits]
            w(f"| {tag} | " + " | ".join(row) + " |\n")
    if free:
        _answer_agreement(w, stats, AnswerRules.of(project).name)
    else:
        _label_agreement(w, stats)
    _annotators_and_build(w, counts, stats, options)
    w("\n## Files and loading\n\n")
    w(f"- `{SETS_FILE}`: one contrast set per line.\n- `{EXAMPLES_FILE}`: one example per line ")
    w("(`role` is `original` or `perturbed`).\n")
    paired = "jsonl" if free else "tsv"
    w(f"- `paired/{{split}}_original.{paired}` and `paired/{{split}}_contrast.{paired}`: aligned ")
    w("by line.\n- `data/examples/{split}.parquet` and `data/sets/{split}.parquet`: the same, ")
    w("typed, for `datasets` (the `configs` above; zstd-compressed Parquet).\n")
    if plain_docs(project):
        w("- `lm_eval/`: a task per split for lm-evaluation-harness; its docs are the examples ")
        w("of `data/examples/{split}.parquet`, each one's query rendered by `utils.py` with the ")
        w("project's prompt (`prompt.json`) as it loads them.\n")
    else:
        w("- `lm_eval/`: a task per split for lm-evaluation-harness, its docs (`{split}.jsonl`) ")
        w("with the project's prompt.\n")
    w("- `manifest.json`: SHA-256 of every file.\n\n```python\n")
    w("from datasets import load_dataset\n\n")
    w('examples = load_dataset("path/to/unzipped/release")  # a DatasetDict of splits\n')
    w('sets = load_dataset("path/to/unzipped/release", "sets")\n```\n\n```sh\n')
    w(
        f"lm_eval --model hf --model_args pretrained=<model> --include_path lm_eval "
        f"--tasks {task_prefix(project)}\n```\n"
    )
    return out.getvalue()


def _answer_agreement(w: Any, stats: dict[str, Any], rules: str) -> None:
    w(
        f"\n## Agreement\n\nValidators typed answers; two match when their token F1, by {rules}'s "
        "rules, is at least the project's answer_match_f1.\n\n| split | items with all votes | "
        "mean pairwise F1 between validators |\n|---|---|---|\n"
    )
    for split, block in stats["per_split"].items():
        w(f"| {split} | {block['items']} | {_fmt(block['mean_pairwise_f1'])} |\n")


def _label_agreement(w: Any, stats: dict[str, Any]) -> None:
    w(
        "\n## Agreement\n\n| split | items with all votes | Fleiss' kappa | Krippendorff's alpha "
        "(nominal) | estimated human macro F1 |\n|---|---|---|---|---|\n"
    )
    for split, block in stats["per_split"].items():
        figures = [block["fleiss_kappa"], block["krippendorff_alpha"], block["human_f1"]["macro"]]
        w(f"| {split} | {block['items']} | " + " | ".join(map(_fmt, figures)) + " |\n")


def _annotators_and_build(
    w: Any, counts: dict[str, Any], stats: dict[str, Any], options: dict[str, Any]
) -> None:
    w("\n## Annotators and time\n\n")
    # An imported set's perturbations have one author, the import's pseudonymous account.
    how = "" if stats["validators"] else " (accounts that wrote or imported them; an import is one)"
    w(f"- Experts: {counts['experts']}{how}; validators: {stats['validators']} (pseudonymous).\n")
    per_edit, per_vote = stats["median_seconds_per_perturbation"], stats["median_seconds_per_vote"]
    if per_edit is None:
        w("- Median seconds per perturbation: no time recorded (imported edits carry none).\n")
    else:
        w(f"- Median seconds per perturbation (those with a time recorded): {_fmt(per_edit)}; ")
        w(f"total authoring hours: {stats['total_hours_authoring']}.\n")
    w(f"- Median seconds per vote: {'no time recorded' if per_vote is None else _fmt(per_vote)}.\n")
    versions = ", ".join(f"v{k}: {v}" for k, v in counts["guideline_versions"].items())
    w(f"- Guideline versions in force (perturbations): {versions}.\n")
    w("\n## How the release was built\n\n")
    w(f"- Split strategy: {options['split_strategy']}")
    if options["split_strategy"] == "random":
        w(f" (seed {options['seed']}, set-level proportions {json.dumps(options['proportions'])})")
    w(". Contrast sets are never split across splits.\n")
    w(f"- Minimum votes for the label, per split: {json.dumps(options['min_agreement'])}.\n")
    w("- Only accepted (or adjudicated) perturbations are included; control items are not.\n")


def _fmt(value: Any) -> str:
    return "n/a" if value is None else f"{value:.3f}" if isinstance(value, float) else str(value)
