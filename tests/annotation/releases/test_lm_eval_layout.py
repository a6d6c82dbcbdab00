"""A classification release's lm_eval docs are its examples' Parquet rows (issue 60): the bundle's
utils.py gives, from the table, the docs the product's prompt renders; no lm_eval file carries
a text again; and the same utils.py still reads a release laid out as before, its docs in
JSON lines beside it."""

import importlib.util
import json
import zipfile
from pathlib import Path

import orjson
import pytest
from django.conf import settings

from annotation.prompting import Prompting
from annotation.releases.services import release_create
from tests.annotation.releases.test_copied import TEXTS, nli_project

pytestmark = pytest.mark.django_db


@pytest.fixture(autouse=True)
def media(settings, tmp_path):  # type: ignore[no-untyped-def]
    settings.MEDIA_ROOT = tmp_path / "media"


def unzipped(release, folder: Path):  # type: ignore[no-untyped-def]
    with zipfile.ZipFile(Path(settings.MEDIA_ROOT) / release.bundle) as bundle:
        bundle.extractall(folder)
        names = bundle.namelist()
    path = folder / "lm_eval" / "utils.py"
    spec = importlib.util.spec_from_file_location(f"utils_{folder.name}", path)
    assert spec is not None and spec.loader is not None
    utils = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(utils)
    return utils, names


def expected_docs(project, folder: Path, split: str) -> list[dict]:  # type: ignore[no-untyped-def]
    """Each example of the split as the harness's doc, its query rendered by the product."""
    prompting = Prompting.of(project)
    out = []
    for line in (folder / "examples.jsonl").read_text(encoding="utf-8").splitlines():
        e = json.loads(line)
        if e["split"] != split:
            continue
        fields = {name: e[name] for name in project.field_names}
        out.append({"set_id": e["set_id"], "split": split, "id": e["id"], "role": e["role"],
                    **fields, "query": prompting.render(fields), "label": e["label"],
                    "choices": list(prompting.words),
                    "gold": list(project.labels).index(e["label"])})  # fmt: skip
    return out


@pytest.mark.parametrize("rows", [False, True])
def test_the_docs_are_the_examples_rows_with_the_projects_prompt(rows, tmp_path, monkeypatch):
    project = nli_project()
    prompt = "{{Premise}}: {premise}\nHypothesis: {hypothesis}\n{premise} again?\nAnswer:"
    verbalizers = {"entailment": 'yes "sure"'}
    project.settings = {**project.settings, "prompt": prompt, "verbalizers": verbalizers}
    project.save()
    if rows:
        from annotation.releases import copied

        monkeypatch.setattr(copied, "applies", lambda project: False)
    release = release_create(project=project, user=None, version="1")
    folder = tmp_path / f"release-{rows}"
    utils, names = unzipped(release, folder)
    assert not [n for n in names if n.startswith("lm_eval/") and n.endswith(".jsonl")]
    for split in ("train", "dev", "test"):
        docs = utils.load(split)[split].to_list()
        assert docs == expected_docs(project, folder, split) and docs
    lm_eval = b"".join((folder / n).read_bytes() for n in names if n.startswith("lm_eval/"))
    assert not any(orjson.dumps(f"{text} not 0")[1:-1] in lm_eval for text in TEXTS[:-1])


def test_a_release_laid_out_before_is_read_from_its_lines(tmp_path):
    """Releases published before this layout carry each split's docs in lm_eval/{split}.jsonl:
    those are the docs, whatever the table holds."""
    project = nli_project()
    release = release_create(project=project, user=None, version="1")
    utils, _ = unzipped(release, tmp_path / "release")
    written = [{"set_id": "s", "split": "test", "id": "x", "role": "original", "premise": "p",
                "hypothesis": "h", "query": "as written then", "label": "entailment",
                "choices": ["entailment", "contradiction"], "gold": 0}]  # fmt: skip
    lines = "".join(json.dumps(doc) + "\n" for doc in written)
    (tmp_path / "release" / "lm_eval" / "test.jsonl").write_text(lines, encoding="utf-8")
    assert utils.load("test")["test"].to_list() == written
    assert utils.load("dev")["dev"].to_list() == expected_docs(project, tmp_path / "release", "dev")
