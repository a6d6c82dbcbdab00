"""How the runners feed the device (evaluation/runners/feed.py), on the CPU: the same code that
pipelines a GPU must give the predictions of a plain one-example-at-a-time loop."""

import pytest

from evaluation.runners import classifier, feed
from evaluation.runners.classifier import SequenceClassifier
from evaluation.runners.feed import ahead, pad_rows
from tests.evaluation import prefork_child
from tests.evaluation.conftest import VOCAB, bert_word_tokenizer
from tests.factories import TEXTS


@pytest.fixture(scope="module")
def pair_model(tmp_path_factory):  # type: ignore[no-untyped-def]
    """A tiny BERT whose second text has token type 1, so types change the predictions."""
    import torch
    from transformers import BertConfig, BertForSequenceClassification

    torch.manual_seed(1)
    directory = tmp_path_factory.mktemp("tiny-pair-bert")
    config = BertConfig(vocab_size=len(VOCAB), hidden_size=16, num_hidden_layers=2,
                        num_attention_heads=2, intermediate_size=32, max_position_embeddings=64,
                        num_labels=3)  # fmt: skip
    BertForSequenceClassification(config).eval().save_pretrained(directory)
    tokenizer = bert_word_tokenizer(VOCAB, 64, second_segment=1)
    tokenizer.model_input_names = ["input_ids", "token_type_ids", "attention_mask"]  # as BERT's
    tokenizer.init_kwargs["model_input_names"] = tokenizer.model_input_names
    tokenizer.save_pretrained(directory)
    return directory


def one_by_one(directory, inputs, max_length):  # type: ignore[no-untyped-def]
    import torch
    from transformers import AutoModelForSequenceClassification, AutoTokenizer

    tokenizer = AutoTokenizer.from_pretrained(directory)
    model = AutoModelForSequenceClassification.from_pretrained(directory).eval()
    with torch.inference_mode():
        return [
            torch.softmax(
                model(**tokenizer(*x, truncation=True, max_length=max_length,
                                  return_tensors="pt")).logits[0], -1
            ).tolist()
            for x in inputs
        ]  # fmt: skip


@pytest.mark.parametrize("chunk", [2048, 5])
def test_pairs_truncated_and_chunked_match_one_at_a_time(pair_model, monkeypatch, chunk):
    """Pairs keep their token types, truncation is the tokenizer's own (longest first), and
    chunks sorted apart still put every prediction back in its example's place."""
    monkeypatch.setattr(classifier, "CHUNK", chunk)
    long = " ".join(TEXTS)  # longer than max_length: truncated
    inputs = [[a, b] for a in TEXTS for b in (TEXTS[0], long)][:11]
    done: list[int] = []
    runner = SequenceClassifier(str(pair_model), device="cpu", max_length=12)
    ours = runner.predict(inputs, batch_size=3, progress=done.append)
    expected = one_by_one(pair_model, inputs, 12)
    for probabilities, label, row in zip(ours.probabilities, ours.labels, expected, strict=True):
        assert list(probabilities.values()) == pytest.approx(row, abs=1e-5)
        assert label == max(probabilities, key=probabilities.__getitem__)
    assert sum(done) == len(inputs)


def test_single_texts_in_many_chunks_match_one_at_a_time(tiny_model, monkeypatch):
    monkeypatch.setattr(classifier, "CHUNK", 4)
    inputs = [[t] for t in TEXTS * 3]
    ours = SequenceClassifier(str(tiny_model), device="cpu", max_length=32).predict(inputs, 3)
    for probabilities, row in zip(
        ours.probabilities, one_by_one(tiny_model, inputs, 32), strict=True
    ):
        assert list(probabilities.values()) == pytest.approx(row, abs=1e-5)


def test_tokenising_in_another_process_gives_the_same_predictions(pair_model, monkeypatch):
    """On CUDA the chunks are tokenised in a spawned process; here that path runs on the CPU."""
    monkeypatch.setattr(classifier, "CHUNK", 4)
    inputs = [[a, b] for a in TEXTS for b in reversed(TEXTS)][:10]
    on_a_thread = SequenceClassifier(str(pair_model), device="cpu", max_length=12)
    assert on_a_thread.process is None
    monkeypatch.setattr(feed, "IN_PROCESS", {"cpu"})
    in_process = SequenceClassifier(str(pair_model), device="cpu", max_length=12)
    assert in_process.process is not None
    ours = in_process.predict(inputs, batch_size=3)
    assert ours == on_a_thread.predict(inputs, batch_size=3)
    assert in_process.predict(inputs[:5], batch_size=3).labels == ours.labels[:5]  # reused
    for probabilities, row in zip(
        ours.probabilities, one_by_one(pair_model, inputs, 12), strict=True
    ):
        assert list(probabilities.values()) == pytest.approx(row, abs=1e-5)


def test_a_celery_prefork_child_tokenises_on_a_thread(tiny_model):
    """Celery's prefork children are daemonic and may not start processes: the runner must
    still score there, on a thread, with the same predictions."""
    import billiard

    expected = SequenceClassifier(str(tiny_model), device="cpu", max_length=12)
    # spawn, not fork: a fork of this process, which has run torch, may hang in its thread pool
    with billiard.get_context("spawn").Pool(1) as pool:
        scored = pool.apply_async(prefork_child.score, (str(tiny_model), TEXTS))
        on_a_thread, labels = scored.get(timeout=120)
    assert on_a_thread
    assert labels == expected.predict([[t] for t in TEXTS], batch_size=2).labels


def test_a_system_that_refuses_a_process_tokenises_on_a_thread(tiny_model, monkeypatch):
    def refuse(*args, **kwargs):  # type: ignore[no-untyped-def]
        raise OSError("[Errno 38] Function not implemented: /dev/shm")

    monkeypatch.setattr(feed, "IN_PROCESS", {"cpu"})
    monkeypatch.setattr(feed, "ProcessPoolExecutor", refuse)
    runner = SequenceClassifier(str(tiny_model), device="cpu", max_length=32)
    assert runner.process is None
    assert len(runner.predict([[t] for t in TEXTS], 2).labels) == len(TEXTS)


def test_pad_rows_pads_right_to_a_multiple_or_a_width():
    assert pad_rows([[5, 6, 7], [8]], 0, multiple=4).tolist() == [[5, 6, 7, 0], [8, 0, 0, 0]]
    assert pad_rows([[5, 6, 7], [8]], 9).tolist() == [[5, 6, 7], [8, 9, 9]]
    assert pad_rows([[], []], 1, width=2).tolist() == [[1, 1], [1, 1]]


def test_ahead_keeps_the_order_and_raises_the_jobs_error():
    assert list(ahead(lambda i=i: i * i for i in range(7))) == [0, 1, 4, 9, 16, 25, 36]

    def broken() -> int:
        raise ValueError("bad chunk")

    with pytest.raises(ValueError, match="bad chunk"):
        list(ahead([lambda: 1, broken, lambda: 3]))
