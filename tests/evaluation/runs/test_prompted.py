"""Prompted language models on classification and free-text releases (docs/prompting.md),
checked example by example against a direct transformers computation written here, and against
lm-evaluation-harness run on the release's own lm_eval/ export with the same tiny model."""

import json
import re
import zipfile
from pathlib import Path

import numpy as np
import pytest

from annotation.models import Release
from evaluation.models import Prediction
from evaluation.runs.execute import run_evaluation
from tests.evaluation.llm import build_causal, build_seq2seq
from tests.evaluation.runs.conftest import PROMPT, REVIEWS
from tests.oracles.consistency import consistency
from tests.oracles.squad import best_exact_match, best_f1


@pytest.fixture(scope="module")
def models(tmp_path_factory):  # type: ignore[no-untyped-def]
    root = tmp_path_factory.getbasetemp() / "llms"
    return {
        "causal": build_causal(root / "causal"),
        "causal-bos": build_causal(root / "causal-bos", add_bos=True),
        "seq2seq": build_seq2seq(root / "seq2seq"),
    }


def _run(root, release, model, split="test"):  # type: ignore[no-untyped-def]
    run = root.post("/api/evaluations/", {"release": release, "model": model, "split": split},
                    format="json")  # fmt: skip
    assert run.status_code == 202, run.json()
    finished = run_evaluation(run.json()["id"])
    assert finished.status == "succeeded", finished.error
    return finished


def _register(root, project, path, **extra):  # type: ignore[no-untyped-def]
    kind = extra.pop("kind", "hf-causal-lm")
    payload = {"project": project.slug, "name": extra.pop("name", kind), "kind": kind,
               "source": str(path), "batch_size": 3, **extra}  # fmt: skip
    created = root.post("/api/models/", payload, format="json")
    assert created.status_code == 201, created.json()
    return created.json()["id"]


# An independent computation: the harness's own split into tokens, then plain transformers ---


@pytest.fixture(scope="module")
def harness_lms(models):  # type: ignore[no-untyped-def]
    """lm-evaluation-harness's own model class on each tiny model (a local folder: no hub). Its
    `_encode_pair` is the harness's rule for a request's tokens: trailing spaces of the context
    move to the continuation; a causal model's continuation is the tail of the tokens of
    context + continuation, len(whole) - len(context's tokens) long; a seq2seq model's is the
    continuation tokenised alone."""
    from lm_eval.models.huggingface import HFLM

    return {name: HFLM(pretrained=str(path), device="cpu", dtype="float32")
            for name, path in models.items()}  # fmt: skip


def direct_loglikelihood(path, lm, context, continuation, seq2seq=False):  # type: ignore[no-untyped-def]
    import torch
    from transformers import AutoModelForCausalLM, AutoModelForSeq2SeqLM

    head, tail = lm._encode_pair(context, continuation)
    with torch.no_grad():
        if seq2seq:
            model = AutoModelForSeq2SeqLM.from_pretrained(path)
            logits = model(input_ids=torch.tensor([head]), labels=torch.tensor([tail])).logits[0]
            logprobs = torch.log_softmax(logits.double(), dim=-1)
            return sum(float(logprobs[i, t]) for i, t in enumerate(tail))
        model = AutoModelForCausalLM.from_pretrained(path)
        logprobs = torch.log_softmax(model(torch.tensor([head + tail])).logits[0].double(), -1)
    return sum(float(logprobs[len(head) + i - 1, t]) for i, t in enumerate(tail))


@pytest.mark.parametrize("name", ["causal", "causal-bos", "seq2seq"])
def test_choices_are_the_harness_loglikelihoods_of_the_verbalizers(
    sentiment, models, harness_lms, name
):
    project, release, root = sentiment
    kind = "hf-seq2seq" if name == "seq2seq" else "hf-causal-lm"
    run = _run(root, release, _register(root, project, models[name], kind=kind))
    predictions = list(run.predictions.all())
    assert len(predictions) == 4 + 6  # four test sets, with one or two perturbations
    right, by_char = [], []
    for p in predictions:
        text = next(e for e in _examples(run) if e["id"] == p.example)["fields"]["text"]
        context = PROMPT.format(text=text)
        seq2seq = kind == "hf-seq2seq"
        words = {"negative": "negative", "positive": "great"}
        expected = {label: direct_loglikelihood(models[name], harness_lms[name], context,
                                                " " + word, seq2seq)
                    for label, word in words.items()}  # fmt: skip
        assert p.loglikelihoods == pytest.approx(expected, abs=1e-4)
        assert p.label == max(expected, key=expected.get)  # type: ignore[arg-type]
        right.append(p.label == p.gold)
        normed = {"negative": expected["negative"] / 8, "positive": expected["positive"] / 5}
        by_char.append(max(normed, key=normed.get) == p.gold)  # type: ignore[arg-type]
    assert run.metrics["acc"] == pytest.approx(np.mean(right))
    assert run.metrics["acc_norm"] == pytest.approx(np.mean(by_char))
    answer = root.get(f"/api/evaluations/{run.pk}/predictions/?format=jsonl")
    lines = [json.loads(line) for line in b"".join(answer.streaming_content).splitlines()]
    ids = [e["id"] for e in _examples(run)]
    assert [line["example_id"] for line in lines] == ids
    for line in lines:
        p = next(p for p in predictions if p.example == line["example_id"])
        assert line == {"example_id": p.example, "set_id": p.set_id, "role": p.role,
                        "gold": p.gold, "prediction": p.label, "correct": p.label == p.gold,
                        "loglikelihoods": pytest.approx(p.loglikelihoods)}  # fmt: skip


def _examples(run):  # type: ignore[no-untyped-def]
    from annotation.releases.bundle import read_examples

    return read_examples(run.release, run.split)


def test_a_bos_is_added_only_by_a_tokenizer_that_adds_it(models):
    from transformers import AutoTokenizer

    from evaluation.runners.prompted import PromptedModel

    for name, starts_with_bos in (("causal", False), ("causal-bos", True)):
        scorer = PromptedModel(str(models[name]), seq2seq=False, device="cpu")
        head, _ = scorer.split("Review: good\nSentiment:", " great")
        bos = AutoTokenizer.from_pretrained(models[name]).convert_tokens_to_ids("<s>")
        assert (head[0] == bos) is starts_with_bos


@pytest.mark.parametrize("name", ["causal", "causal-bos", "seq2seq"])
def test_a_context_and_its_continuation_become_the_harnesss_tokens(models, harness_lms, name):
    from evaluation.runners.prompted import PromptedModel

    scorer = PromptedModel(str(models[name]), seq2seq=name == "seq2seq", device="cpu")
    for context, continuation in [
        ("Review: the film was good\nSentiment:", " great"),
        ("Review: the film was good\nSentiment: ", "great"),  # the space moves to the choice
        ("Review: a good plot\nSentiment:  \n", "negative"),
        ("Context: Alice is in Paris.\nQuestion: where is Alice?\nAnswer:", " Paris"),
    ]:
        head, tail = scorer.split(context, continuation)
        assert (list(head), list(tail)) == harness_lms[name]._encode_pair(context, continuation)


def _unzip(run, tmp_path) -> Path:  # type: ignore[no-untyped-def]
    from django.conf import settings

    folder = tmp_path / "release"
    with zipfile.ZipFile(Path(settings.MEDIA_ROOT) / run.release.bundle) as bundle:
        bundle.extractall(folder)
    return folder


def harness(monkeypatch, folder: Path, model: Path, task: str, cwd: Path):  # type: ignore[no-untyped-def]
    """lm_eval.simple_evaluate on the release's lm_eval/ folder, offline, from another folder;
    the environment and the working directory are restored after the test."""
    import lm_eval

    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setenv("HF_DATASETS_OFFLINE", "1")
    monkeypatch.chdir(cwd)
    return lm_eval.simple_evaluate(
        model="hf", model_args=f"pretrained={model},dtype=float32", tasks=[task],
        task_manager=lm_eval.tasks.TaskManager(include_path=str(folder / "lm_eval")),
        device="cpu", batch_size=4, log_samples=True,
    )  # fmt: skip


def test_lm_eval_on_the_export_makes_the_same_choices(sentiment, models, tmp_path, monkeypatch):
    project, release, root = sentiment
    run = _run(root, release, _register(root, project, models["causal-bos"]))
    folder = _unzip(run, tmp_path)
    out = harness(monkeypatch, folder, models["causal-bos"], "contrastlab_reviews_test", tmp_path)
    samples = out["samples"]["contrastlab_reviews_test"]
    ours = {p.example: p for p in run.predictions.all()}
    assert sorted(s["doc"]["id"] for s in samples) == sorted(ours)
    labels = project.labels
    for sample in samples:
        p = ours[sample["doc"]["id"]]
        lls = [float(r[0]) for r in sample["filtered_resps"]]
        assert lls == pytest.approx([p.loglikelihoods[label] for label in labels], abs=1e-4)
        assert labels[int(np.argmax(lls))] == p.label
        assert sample["doc"]["set_id"] == p.set_id
    figures = out["results"]["contrastlab_reviews_test"]
    assert figures["acc,none"] == pytest.approx(run.metrics["acc"])
    assert figures["acc_norm,none"] == pytest.approx(run.metrics["acc_norm"])
    assert figures["consistency,none"] == pytest.approx(run.metrics["consistency"])


def test_shots_come_from_another_split_and_the_run_refuses_their_own(sentiment, models):
    project, release, root = sentiment
    model = _register(root, project, models["causal"], name="3-shot", few_shot=2,
                      few_shot_split="train")  # fmt: skip
    refused = root.post("/api/evaluations/", {"release": release, "model": model,
                                              "split": "train"}, format="json")  # fmt: skip
    assert refused.status_code == 400 and "shots from train" in refused.json()["detail"]
    from evaluation.models import ModelSpec
    from evaluation.runs.prompting import prompts

    spec = ModelSpec.objects.get(pk=model)
    run_release = Release.objects.get(pk=release)
    examples = [e for e in _examples_of(run_release, "test")]
    texts = prompts(spec, run_release, examples)
    train = {e["fields"]["text"] for e in _examples_of(run_release, "train")}
    for example, text in zip(examples, texts, strict=True):
        blocks = text.split("\n\n")
        assert len(blocks) == 3 and blocks[-1] == PROMPT.format(**example["fields"])
        shots = [re.match(r"Review: (.*)\nSentiment:", b).group(1) for b in blocks[:2]]  # type: ignore[union-attr]
        assert set(shots) <= train
    assert texts == prompts(spec, run_release, examples)  # seeded
    run = _run(root, release, model)
    assert run.predictions.count() == 10


def test_a_prompt_longer_than_the_limit_fails_the_run_naming_its_example(
    sentiment, models, settings
):
    """A few-shot prompt over long fields made a worker tokenise megabytes per example."""
    project, release, root = sentiment
    model = _register(root, project, models["causal"], name="2-shot", few_shot=2,
                      few_shot_split="train")  # fmt: skip
    longest = max(len(PROMPT.format(**e["fields"]))
                  for e in _examples_of(Release.objects.get(pk=release), "test"))  # fmt: skip
    settings.PROMPT_MAX_CHARS = longest  # shorter than any prompt with its two shots
    queued = root.post("/api/evaluations/", {"release": release, "model": model, "split": "test"},
                       format="json")  # fmt: skip
    run = run_evaluation(queued.json()["id"])
    assert run.status == "failed" and run.predictions.count() == 0
    assert re.fullmatch(r"The prompt of example \S+ is [\d,]+ characters, above PROMPT_MAX_CHARS "
                        rf"\({longest:,}\): shorten the prompt, ask for fewer shots, or raise "
                        r"the limit on the workers\.", run.error), run.error  # fmt: skip


def _examples_of(release, split):  # type: ignore[no-untyped-def]
    from annotation.releases.bundle import read_examples

    return read_examples(release, split)


def test_prompts_name_only_fields_and_verbalizers_only_labels(sentiment):
    project, _, root = sentiment
    bad = [({"prompt": "Review: {review}"}, "{review}, which are not fields", None),
           ({"prompt": "Review: {text"}, "prompt: expected '}'", None),
           ({"prompt": "{0}"}, "{0} is not a plain placeholder", None),
           ({"prompt": "{text:d}"}, "{text:d} is not a plain placeholder", None),
           ({"prompt": "{text:{text}}"}, "{text:{text}} is not a plain placeholder", None),
           ({"prompt": "{text:>100000000}"}, "{text:>100000000} is not a plain", None),
           ({"prompt": "{text!r}"}, "{text!r} is not a plain placeholder", None),
           ({"prompt": "{text.upper}"}, "{text.upper} is not a plain placeholder", None),
           ({"prompt": "{text[0]}"}, "{text[0]} is not a plain placeholder", None),
           ({"verbalizers": {"neutral": "meh"}}, "neutral, which are not labels", None),
           ({"verbalizers": {"positive": ""}}, "non-empty", "may not be blank"),
           ({"verbalizers": {"positive": "negative"}}, "may not share a word", None)]  # fmt: skip
    for change, message, model_message in bad:
        answer = root.patch(f"/api/projects/{project.slug}/", {"settings": change}, format="json")
        assert answer.status_code == 400 and message in answer.json()["detail"], answer.json()
        model = root.post("/api/models/", {"project": project.slug, "name": "m",
                                           "kind": "hf-causal-lm", "source": "org/m", **change},
                          format="json")  # fmt: skip
        said = json.dumps(model.json())
        assert model.status_code == 400 and (model_message or message) in said, said


def test_a_prompt_saved_before_the_check_renders_at_the_size_of_its_fields(sentiment):
    """{text:>100000000} (18 characters) made the Prompt page a 300 MB answer; {text:d} made it
    and every release a 500. Rendering never formats: a placeholder is its field's text."""
    from django.contrib.auth.models import User
    from django.test import Client

    from annotation.models import Project

    project, _, root = sentiment
    for stored in ("{text:>100000000}", "{text:d}", "{text!r} {text[0]}", "{text"):
        Project.objects.filter(pk=project.pk).update(settings={**project.settings,
                                                               "prompt": stored})  # fmt: skip
        page = Client()
        page.force_login(User.objects.get(username="root"))
        answer = page.get(f"/p/{project.slug}/models/prompt/")
        assert answer.status_code == 200 and len(answer.content) < 200_000, stored
        version = f"v{len(stored)}-{stored.count('{')}"
        published = root.post(f"/api/projects/{project.slug}/releases/", {"version": version})
        assert published.status_code == 201, (stored, published.json())


# Free text ---------------------------------------------------------------------------------


def direct_generation(path, context, max_new_tokens):  # type: ignore[no-untyped-def]
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer

    tokenizer = AutoTokenizer.from_pretrained(path)
    model = AutoModelForCausalLM.from_pretrained(path)
    ids = torch.tensor([tokenizer.encode(context)])
    out = model.generate(ids, max_new_tokens=max_new_tokens, do_sample=False,
                         pad_token_id=tokenizer.pad_token_id)[0, ids.shape[1] :]  # fmt: skip
    return tokenizer.decode(out, skip_special_tokens=True).split("\n")[0]


def test_free_text_is_answered_by_greedy_generation_and_scored_as_squad_does(
    questions, models, tmp_path, monkeypatch
):
    project, release, root = questions
    run = _run(root, release, _register(root, project, models["causal"]))  # 64 new tokens
    examples = {e["id"]: e for e in _examples(run)}
    members = []
    for p in run.predictions.all():
        e = examples[p.example]
        context = "Context: {context}\nQuestion: {question}\nAnswer:".format(**e["fields"])
        assert p.output == direct_generation(models["causal"], context, 64).strip()
        f1 = best_f1(p.output, e["answers"])
        assert (p.em, p.f1) == (best_exact_match(p.output, e["answers"]), pytest.approx(f1))
        members.append((e["set_id"], f1 > 0.8))  # docs/metrics.md: every member's F1 above 0.8
    assert run.metrics["consistency"] == pytest.approx(consistency(members))
    folder = _unzip(run, tmp_path)
    out = harness(monkeypatch, folder, models["causal"], "contrastlab_qa_test", tmp_path)
    samples = out["samples"]["contrastlab_qa_test"]
    ours = {p.example: p for p in run.predictions.all()}
    for sample in samples:
        assert sample["filtered_resps"][0].strip() == ours[sample["doc"]["id"]].output
    figures = out["results"]["contrastlab_qa_test"]
    assert figures["consistency,none"] == pytest.approx(run.metrics["consistency"])
    assert figures["f1,none"] == pytest.approx(
        np.mean([p.f1 for p in Prediction.objects.filter(run=run)])
    )


def test_an_unzipped_release_loads_with_datasets_in_both_configs(sentiment, tmp_path):
    import datasets

    release = Release.objects.get(pk=sentiment[1])
    folder = tmp_path / "unzipped"
    from django.conf import settings

    with zipfile.ZipFile(Path(settings.MEDIA_ROOT) / release.bundle) as bundle:
        bundle.extractall(folder)
    cache = str(tmp_path / "hf-cache")  # a fresh cache: paths and sizes repeat across runs
    examples = datasets.load_dataset(str(folder), cache_dir=cache)
    assert set(examples) == {"test", "train"}
    assert examples["test"].num_rows == 10 and examples["train"].num_rows == 5
    assert examples["test"].features["tags"].feature.dtype == "string"
    assert examples["test"].features["votes"].feature["count"].dtype == "int64"
    lines = [json.loads(line) for line in (folder / "examples.jsonl").read_text().splitlines()]
    test_ids = [line["id"] for line in lines if line["split"] == "test"]
    assert examples["test"]["id"] == test_ids
    sets = datasets.load_dataset(str(folder), "sets", cache_dir=cache)
    assert sets["test"].num_rows == 4
    first = sets["test"][0]
    assert first["original"]["fields"]["text"] == REVIEWS[0]
    assert first["perturbations"][0]["label"] == "negative"
    assert sets["test"].features["perturbations"].feature["agreement"].dtype == "float64"
