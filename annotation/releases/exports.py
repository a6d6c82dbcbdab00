"""A release in the tools researchers already use (docs/formats.md):

- `lm_eval/`: tasks for lm-evaluation-harness, one per split over all its examples, a group,
  and `utils.py` (contrast consistency as a harness metric), which loads each split's docs;
- `data/{examples,sets}/{split}.parquet`: the Hub's dataset layout, declared in the card's
  `configs:` header, so that `datasets.load_dataset(<unzipped release>)` reads it; written
  from each chunk's columnar table (annotation.releases.table).

A classification project's docs are the rows of `data/examples/{split}.parquet` (`plain_docs`):
the tasks carry the prompt as pieces (`prompt.json`), and utils.py renders each doc's query
from its fields as it loads them, so that no text is written a second time. Free-text and
minimal-pair docs (answer spans, pairs) are written as JSON lines, a chunk of sets at a time,
beside the bundle's other files; utils.py reads such lines where a split has them, as every
release before this layout has.
"""

import json
import re
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any, TypeVar

import orjson

from annotation.models import Project, Release
from annotation.prompting import Prompting
from annotation.releases.files import HashingFile, file_sha256
from annotation.releases.members import COLUMNS
from annotation.text.answers import AnswerRules, answer_text

LM_EVAL = "lm_eval"
PROMPT_FILE = "prompt.json"  # the prompt's pieces, where the docs are the examples' rows
UTILS = Path(__file__).with_name("lm_eval_utils.py")  # copied into each bundle as utils.py
ACCEPTABLE, UNACCEPTABLE = "acceptable", "unacceptable"
M = TypeVar("M")


def paired(members: list[M], label: Callable[[M], str]) -> Iterator[tuple[M, M]]:
    """The minimal pairs of one set: each member labelled acceptable against each labelled
    unacceptable, as (acceptable, unacceptable), unacceptable members in their order."""
    good = [m for m in members if label(m) == ACCEPTABLE]
    for bad in members:
        if label(bad) == UNACCEPTABLE:
            yield from ((m, bad) for m in good)


def task_prefix(project: Project) -> str:
    """The harness's task names are identifiers: contrastlab_<slug>, then _<split>."""
    return "contrastlab_" + re.sub(r"\W", "_", project.slug)


def members(record: dict[str, Any]) -> Iterator[tuple[str, dict[str, Any]]]:
    yield "original", record["original"]
    for perturbation in record["perturbations"]:
        yield "perturbed", perturbation


class LmEvalExport:
    """lm_eval/: one JSONL of docs per split, written as sets come; the YAMLs at the end."""

    def __init__(self, project: Project, work: Path, opened: Callable[[str], HashingFile]):
        self.project = project
        self.opened = opened
        self.files: dict[str, HashingFile] = {}
        (work / LM_EVAL).mkdir()
        self.work = work
        self.prompting = Prompting.of(project)
        self.free_text = project.is_free_text
        self.pairs = project.task_type == Project.TaskType.MINIMAL_PAIR
        self.gold = {label: j for j, label in enumerate(project.labels)}
        self.from_table = plain_docs(project)
        self.splits: set[str] = set()

    def add(self, record: dict[str, Any]) -> None:
        self.add_all([record])

    def add_all(self, records: list[dict[str, Any]]) -> None:
        """A chunk of sets: each split's docs written at once."""
        lines: dict[str, list[bytes]] = {}
        for record in records:
            docs = lines.setdefault(record["split"], [])
            docs.extend(
                orjson.dumps(doc, option=orjson.OPT_APPEND_NEWLINE) for doc in self.docs(record)
            )
        for split, written in lines.items():
            self.write(split, b"".join(written))

    def write(self, split: str, data: bytes | memoryview) -> None:
        """Docs of a split, as JSON lines."""
        if split not in self.files:
            self.files[split] = self.opened(f"{LM_EVAL}/{split}.jsonl")
        self.files[split].write(data)

    def docs(self, record: dict[str, Any]) -> Iterator[dict[str, Any]]:
        """Each doc keeps its example's id and set_id; `query` is the rendered prompt."""
        base = {"set_id": record["set_id"], "split": record["split"]}
        if self.pairs:
            rows = [(role, m) for role, m in members(record)]
            for (_, good), (role, bad) in paired(rows, lambda row: row[1]["label"]):
                source = bad["fields"].get("source")
                yield {
                    **base,
                    "id": bad["id"],
                    "good_id": good["id"],
                    "role": role,
                    "query": self.prompting.over_source(source),
                    "sentence_good": good["fields"]["text"],
                    "sentence_bad": bad["fields"]["text"],
                }
            return
        for role, member in members(record):
            doc = {
                **base,
                "id": member["id"],
                "role": role,
                **member["fields"],
                "query": self.prompting.render(member["fields"]),
            }
            if self.free_text:  # answer_spans: each answer's spans, for DROP's metric
                doc["answers"] = [answer_text(a) for a in member["answers"]]
                doc["answer_spans"] = [[a] if isinstance(a, str) else a for a in member["answers"]]
            else:
                doc |= {
                    "label": member["label"],
                    "choices": self.prompting.words,
                    "gold": self.gold[member["label"]],
                }
            yield doc

    def finish(self, release: Release) -> dict[str, str]:
        """Close the data files; write the tasks, the group and utils.py. Their digests."""
        digests = {f"{LM_EVAL}/{s}.jsonl": file.close() for s, file in self.files.items()}
        if self.from_table:
            digests |= self._write(PROMPT_FILE, self.prompt_pieces())
        prefix = task_prefix(self.project)
        tasks = []
        for split in sorted(self.splits | set(self.files)):
            name = f"{prefix}_{split}"
            tasks.append(name)
            digests |= self._write(f"{name}.yaml", self.task_yaml(name, split, release))
        group = f"group: {prefix}\ntask:\n" + "".join(f"  - {t}\n" for t in tasks)
        digests |= self._write(f"{prefix}.yaml", group + "metadata:\n  version: 1.0\n")
        digests |= self._write("utils.py", UTILS.read_text(encoding="utf-8"))
        if self.free_text:  # the project's answer rules, which utils.py scores by
            rules = AnswerRules.of(self.project)
            chosen = {"normalization": rules.normalization, "consistency": rules.consistency}
            digests |= self._write("answer_rules.json", json.dumps(chosen, indent=2) + "\n")
        return digests

    def prompt_pieces(self) -> str:
        """The prompt as utils.py renders it over a doc's fields: its texts, and each field
        as {"field": name} (Prompting.render over markers), with the choices and labels."""
        names = list(self.project.field_names)
        marked = self.prompting.render({n: f"\x00{j}\x00" for j, n in enumerate(names)})
        pieces: list[Any] = []
        for j, piece in enumerate(re.split("\x00(\\d+)\x00", marked)):
            if j % 2:
                pieces.append({"field": names[int(piece)]})
            elif piece:
                pieces.append(piece)
        prompt = {
            "fields": names,
            "pieces": pieces,
            "choices": self.prompting.words,
            "labels": list(self.project.labels),
        }
        return json.dumps(prompt, indent=1, ensure_ascii=False) + "\n"

    def _write(self, name: str, text: str) -> dict[str, str]:
        path = self.work / LM_EVAL / name
        path.write_text(text, encoding="utf-8")
        return {f"{LM_EVAL}/{name}": file_sha256(path)}

    def task_yaml(self, name: str, split: str, release: Release) -> str:
        q = json.dumps  # a JSON string is a YAML double-quoted scalar
        head = (
            f"task: {name}\ncustom_dataset: !function utils.load\n"
            f"metadata:\n  version: {q(release.version)}\n  split: {q(split)}\n"
            f"test_split: {q(split)}\n"
        )
        metrics = ["acc", "acc_norm"]
        if self.project.is_free_text:
            metrics = ["exact_match", "f1"]
            body = (
                "output_type: generate_until\ndoc_to_text: query\n"
                "doc_to_target: \"{{answers[0] if answers else ''}}\"\n"
                'target_delimiter: " "\nprocess_results: !function utils.process_answers\n'
                'generation_kwargs:\n  until:\n    - "\\n"\n  do_sample: false\n'
                "  max_gen_toks: 64\n"
            )
        elif self.project.task_type == Project.TaskType.MINIMAL_PAIR:
            metrics = ["acc"]
            body = (
                "output_type: multiple_choice\ndoc_to_text: query\n"
                'doc_to_choice: "{{[sentence_good, sentence_bad]}}"\ndoc_to_target: 0\n'
                'target_delimiter: ""\nprocess_results: !function utils.process_pairs\n'
            )
        else:
            body = (
                "output_type: multiple_choice\ndoc_to_text: query\ndoc_to_choice: choices\n"
                'doc_to_target: gold\ntarget_delimiter: " "\n'
                "process_results: !function utils.process_choices\n"
            )
        listed = "".join(
            f"  - metric: {m}\n    aggregation: mean\n    higher_is_better: true\n" for m in metrics
        )
        consistency = (
            "  - metric: consistency\n    aggregation: !function utils.consistency\n"
            "    higher_is_better: true\n"
        )
        return head + body + "metric_list:\n" + listed + consistency


def hub_header(splits: list[str]) -> str:
    """The card's YAML header: one config of examples (the default) and one of sets."""
    out = ["---", "configs:"]
    for config in ("examples", "sets"):
        out.append(f"- config_name: {config}")
        if config == "examples":
            out.append("  default: true")
        out.append("  data_files:")
        for split in splits:
            out += [f"  - split: {split}", f"    path: data/{config}/{split}.parquet"]
    return "\n".join([*out, "---", "", ""])


def plain_docs(project: Project) -> bool:
    """Whether the project's lm_eval docs are its examples' rows, with the prompt rendered as
    they load (`prompt_pieces`): classification with labels, and a prompt without markers."""
    plain = project.task_type == "classification" and not project.is_free_text
    keys = set(project.field_names) & COLUMNS  # a field named as a doc's key
    return plain and not keys and "\x00" not in Prompting.of(project).prompt
