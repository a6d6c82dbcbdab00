"""Minimal pairs (docs/task-types.md): LM scores, pair accuracy, ties, consistency and discrepancy,
each checked against a direct transformers computation on tiny models built here."""

import numpy as np
import pytest
from django.test import Client

from annotation.models import Perturbation
from evaluation.metrics.pairs import ScoredPair, pair_metrics
from evaluation.runners.lm import LanguageModelScorer
from evaluation.runs.execute import run_evaluation
from tests.factories import ExampleFactory, UserFactory, member, submitted_perturbation

TEXTS = ["the film was good .", "the films was good .", "The film was good .", "a plot is bad ."]
SOURCES = ["le film est bon .", "le film est bon .", "le film est bon .", "la est mauvais ."]


def direct_causal(path, text, source=None, prompt="{source}\n"):  # type: ignore[no-untyped-def]
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer

    tokenizer, model = (
        AutoTokenizer.from_pretrained(path),
        AutoModelForCausalLM.from_pretrained(path),
    )
    context = (
        [tokenizer.bos_token_id]
        if source is None
        else tokenizer(prompt.format(source=source), add_special_tokens=False)["input_ids"]
    )
    target = tokenizer(text, add_special_tokens=False)["input_ids"]
    ids = torch.tensor([context + target])
    with torch.no_grad():
        logprobs = torch.log_softmax(model(ids).logits[0].double(), dim=-1)
    return sum(float(logprobs[len(context) + i - 1, t]) for i, t in enumerate(target))


def direct_seq2seq(path, text, source):  # type: ignore[no-untyped-def]
    import torch
    from transformers import AutoModelForSeq2SeqLM, AutoTokenizer

    tokenizer, model = (
        AutoTokenizer.from_pretrained(path),
        AutoModelForSeq2SeqLM.from_pretrained(path),
    )
    encoder = torch.tensor([tokenizer(source)["input_ids"]])
    labels = torch.tensor([tokenizer(text_target=text)["input_ids"]])
    with torch.no_grad():
        return -float(model(input_ids=encoder, labels=labels).loss)  # mean token log-prob


def test_causal_scores_are_summed_log_probs_after_bos_or_the_prompt(tiny_gpt2):
    scorer = LanguageModelScorer(str(tiny_gpt2), seq2seq=False, device="cpu")
    assert scorer.score(TEXTS, [None] * 4, batch_size=3) == pytest.approx(
        [direct_causal(tiny_gpt2, t) for t in TEXTS], abs=1e-4
    )
    with_source = scorer.score(TEXTS, SOURCES, batch_size=2)
    assert with_source == pytest.approx(
        [direct_causal(tiny_gpt2, t, s) for t, s in zip(TEXTS, SOURCES, strict=True)], abs=1e-4
    )


def test_seq2seq_scores_are_mean_log_probs_given_the_source(tiny_t5):
    scorer = LanguageModelScorer(str(tiny_t5), seq2seq=True, device="cpu")
    assert scorer.score(TEXTS, SOURCES, batch_size=3) == pytest.approx(
        [direct_seq2seq(tiny_t5, t, s) for t, s in zip(TEXTS, SOURCES, strict=True)], abs=1e-4
    )


@pytest.mark.parametrize("batch_size", [1, 2, 3, 8])
def test_identical_tokens_tie_however_they_are_batched(tiny_gpt2, tiny_t5, batch_size):
    """TEXTS[0] and TEXTS[2] differ only in case, and the tokenizer lowercases."""
    for path, seq2seq in ((tiny_gpt2, False), (tiny_t5, True)):
        scores = LanguageModelScorer(str(path), seq2seq=seq2seq, device="cpu").score(
            TEXTS, SOURCES, batch_size=batch_size
        )
        assert scores[0] == scores[2]


def test_pair_metrics_count_ties_as_wrong_and_sets_as_units():
    pairs = [
        ScoredPair("a", -1.0, -2.0, ("agreement",), own=-0.5),  # right; ŷ 0.5 above
        ScoredPair("a", -3.0, -3.0, ("agreement",), own=-4.0),  # tie: wrong; ŷ below both
        ScoredPair("b", -2.0, -1.0, ("negation",), own=None),  # wrong
        ScoredPair("c", -1.0, -5.0, ("negation",), own=-1.0),  # right; ŷ equals the best
    ]
    metrics = pair_metrics(pairs, samples=200)
    assert metrics["pair_accuracy"] == 0.5 and metrics["ties"] == 1
    assert metrics["consistency"] == pytest.approx(1 / 3)  # only set c is right throughout
    assert metrics["per_tag"]["agreement"] == {"accuracy": 0.5, "count": 2}
    assert metrics["discrepancy"] == pytest.approx((0.5 + 0 + 0) / 3)
    assert sum(metrics["differences"]["counts"]) == 4
    low, high = metrics["intervals"]["pair_accuracy"]
    assert 0 <= low <= 0.5 <= high <= 1
    assert pair_metrics([ScoredPair("a", -1.0, -2.0)])["discrepancy"] is None


@pytest.fixture
def minimal_pair_release(db, settings, tmp_path, client_for):  # type: ignore[no-untyped-def]
    """A minimal-pair project made through the API, four sets, released."""
    settings.MEDIA_ROOT = tmp_path / "media"
    staff = UserFactory(username="root", is_staff=True)
    root = client_for(staff)
    created = root.post("/api/projects/", {
        "name": "MT pairs", "slug": "mt-pairs", "task_type": "minimal_pair",
        "fields": [{"name": "text", "editable": True}, {"name": "source", "editable": False}],
        "labels": ["acceptable", "unacceptable"], "tags": [{"name": "agreement"}],
    }, format="json")  # fmt: skip
    assert created.status_code == 201, created.json()
    from annotation.models import Project

    project = Project.objects.get(slug="mt-pairs")
    author = member(project, "ana", "expert")
    edits = [("the film was good .", "the films was good .", "le film est bon ."),
             ("the film was good .", "The film was good .", "le film est bon ."),
             ("a plot is bad .", "a plot are bad .", "la est mauvais ."),
             ("the films were good .", "the films was good .", "le film est bon .")]  # fmt: skip
    for n, (good, bad, source) in enumerate(edits):
        pivot = ExampleFactory(project=project, external_id=f"s{n}", label="acceptable",
                               fields={"text": good, "source": source})  # fmt: skip
        p = submitted_perturbation(project, author, pivot=pivot, text=bad, label="unacceptable",
                                   tag="agreement")  # fmt: skip
        Perturbation.objects.filter(pk=p.pk).update(status="accepted")
    release = root.post(f"/api/projects/{project.slug}/releases/", {"version": "1"}, format="json")
    assert release.status_code == 201, release.json()
    return project, release.json()["id"], root, edits


@pytest.mark.parametrize("kind", ["hf-causal-lm", "hf-seq2seq"])
def test_a_minimal_pair_release_is_scored_as_transformers_scores_it(
    minimal_pair_release, kind, tiny_gpt2, tiny_t5, settings
):
    project, release, root, edits = minimal_pair_release
    path = tiny_gpt2 if kind == "hf-causal-lm" else tiny_t5
    settings.MODELS_DIR = path.parent
    payload = {"project": project.slug, "name": kind, "kind": kind, "source": str(path),
               "max_new_tokens": 5}  # fmt: skip
    model = root.post("/api/models/", payload, format="json")
    assert model.status_code == 201, model.json()
    run = root.post("/api/evaluations/", {"release": release, "model": model.json()["id"]},
                    format="json")  # fmt: skip
    assert run.status_code == 202, run.json()
    finished = run_evaluation(run.json()["id"])
    assert finished.status == "succeeded", finished.error
    metrics = root.get(f"/api/evaluations/{finished.pk}/").json()["metrics"]

    def direct(text, source):  # type: ignore[no-untyped-def]
        if kind == "hf-causal-lm":
            return direct_causal(path, text, source)
        return direct_seq2seq(path, text, source)

    right = [direct(g, s) > direct(b, s) for g, b, s in edits]
    ties = [round(direct(g, s), 6) == round(direct(b, s), 6) for g, b, s in edits]
    assert ties == [False, True, False, False]  # "The" and "the" are one token
    assert metrics["pair_accuracy"] == pytest.approx(np.mean(right))
    assert metrics["ties"] == 1
    assert metrics["consistency"] == pytest.approx(np.mean(right))  # one pair per set
    own = {e.set_id: e for e in finished.predictions.filter(role="original")}
    gaps = []
    for n, (good, bad, source) in enumerate(edits):
        ours = own[f"s{n}"]
        assert ours.output_score == pytest.approx(_direct_own(kind, path, source), abs=1e-4)
        gaps.append(max(0.0, ours.output_score - max(direct(good, source), direct(bad, source))))
    assert metrics["discrepancy"] == pytest.approx(np.mean(gaps), abs=1e-4)
    page = Client()
    page.force_login(UserFactory(username="boss", is_staff=True))
    html = page.get(f"/p/{project.slug}/evaluations/{finished.pk}/").content.decode()
    assert "Pair accuracy" in html and "Distributional discrepancy" in html


def _direct_own(kind, path, source):  # type: ignore[no-untyped-def]
    """ŷ by greedy search with transformers, scored like a text (§10.2)."""
    import torch
    from transformers import AutoModelForCausalLM, AutoModelForSeq2SeqLM, AutoTokenizer

    tokenizer = AutoTokenizer.from_pretrained(path)
    if kind == "hf-causal-lm":
        model = AutoModelForCausalLM.from_pretrained(path)
        context = tokenizer(f"{source}\n", add_special_tokens=False)["input_ids"]
        out = model.generate(torch.tensor([context]), max_new_tokens=5, do_sample=False,
                             pad_token_id=0)[0].tolist()  # fmt: skip
        generated = out[len(context) :]
        ids = torch.tensor([context + generated])
        with torch.no_grad():
            logprobs = torch.log_softmax(model(ids).logits[0].double(), dim=-1)
        return sum(float(logprobs[len(context) + i - 1, t]) for i, t in enumerate(generated))
    model = AutoModelForSeq2SeqLM.from_pretrained(path)
    encoder = torch.tensor([tokenizer(source)["input_ids"]])
    generated = model.generate(encoder, max_new_tokens=5, do_sample=False)[0].tolist()[1:]
    with torch.no_grad():
        return -float(model(input_ids=encoder, labels=torch.tensor([generated])).loss)


def test_only_language_models_score_minimal_pairs(minimal_pair_release, project, people, staff):
    mp_project, _, root, _ = minimal_pair_release
    refused = root.post("/api/models/", {"project": mp_project.slug, "name": "c",
                                         "kind": "hf-sequence-classification", "source": "org/c"},
                        format="json")  # fmt: skip
    assert refused.status_code == 400 and "hf-causal-lm or hf-seq2seq" in refused.json()["detail"]
    bad_labels = root.post("/api/projects/", {
        "name": "x", "slug": "x", "task_type": "minimal_pair", "fields": [{"name": "text"}],
        "labels": ["good", "bad"],
    }, format="json")  # fmt: skip
    assert (
        bad_labels.status_code == 400 and "acceptable, unacceptable" in bad_labels.json()["detail"]
    )


def test_lm_eval_on_the_blimp_shaped_export_gives_the_pair_accuracy(
    minimal_pair_release, tiny_gpt2, tmp_path, monkeypatch
):
    from tests.evaluation.runs.test_prompted import _unzip, harness

    project, release, root, edits = minimal_pair_release
    payload = {"project": project.slug, "name": "gpt2", "kind": "hf-causal-lm",
               "source": str(tiny_gpt2), "max_new_tokens": 2}  # fmt: skip
    model = root.post("/api/models/", payload, format="json").json()["id"]
    run = root.post("/api/evaluations/", {"release": release, "model": model}, format="json")
    finished = run_evaluation(run.json()["id"])
    assert finished.status == "succeeded", finished.error
    folder = _unzip(finished, tmp_path)
    out = harness(monkeypatch, folder, tiny_gpt2, "contrastlab_mt_pairs_test", tmp_path)
    samples = out["samples"]["contrastlab_mt_pairs_test"]
    scores = {p.example: p.score for p in finished.predictions.all()}
    originals = {p.set_id: p.example for p in finished.predictions.filter(role="original")}
    assert len(samples) == len(edits)
    for sample in samples:  # the harness scores each pair's sentences as ContrastLab does
        doc, lls = sample["doc"], [float(r[0]) for r in sample["filtered_resps"]]
        assert doc["good_id"] == originals[doc["set_id"]]
        assert lls == pytest.approx([scores[doc["good_id"]], scores[doc["id"]]], abs=1e-4)
    figures = out["results"]["contrastlab_mt_pairs_test"]
    assert figures["acc,none"] == pytest.approx(finished.metrics["pair_accuracy"])
    assert figures["consistency,none"] == pytest.approx(finished.metrics["consistency"])
