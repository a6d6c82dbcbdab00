"""The extractive-QA runner (docs/task-types.md) on tiny models built here and loaded through the
real transformers code: it agrees with a brute-force reading of each example, and finds answers
beyond the first window of a long context. (transformers 5 removed the question-answering
pipeline, so there is no pipeline to compare with.)"""

from pathlib import Path

import pytest

from evaluation.runners.base import RunnerError
from evaluation.runners.qa import ExtractiveQA
from tests.evaluation.conftest import bert_word_tokenizer

VOCAB = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", "when", "who", "did", "curie", "win",
         "marie", "pierre", "in", "1903", "1911", "and", "again", "the", "prize", "nobel", "?",
         ".", "shared", "it", "with", "her", "filler"]  # fmt: skip


def build_tiny_qa(directory: Path, *, finder: bool = False) -> Path:
    """A random BERT QA model; with `finder`, one whose start and end logits peak on "1911"
    and nowhere else (no layers, embeddings that only "1911" lights up)."""
    import torch
    from transformers import BertConfig, BertForQuestionAnswering

    torch.manual_seed(0)
    vocab = {token: i for i, token in enumerate(VOCAB)}
    tokenizer = bert_word_tokenizer(VOCAB, 512, second_segment=1)
    config = BertConfig(
        vocab_size=len(VOCAB), hidden_size=16, num_hidden_layers=0 if finder else 2,
        num_attention_heads=2, intermediate_size=32, max_position_embeddings=512,
    )  # fmt: skip
    model = BertForQuestionAnswering(config).eval()
    if finder:
        with torch.no_grad():
            embeddings = model.bert.embeddings
            for table in (embeddings.word_embeddings, embeddings.position_embeddings,
                          embeddings.token_type_embeddings):  # fmt: skip
                table.weight.zero_()
            embeddings.word_embeddings.weight[vocab["1911"], 0] = 10.0
            model.qa_outputs.weight.zero_()
            model.qa_outputs.weight[:, 0] = 1.0
            model.qa_outputs.bias.zero_()
    model.save_pretrained(directory)
    tokenizer.save_pretrained(directory)
    return directory


@pytest.fixture(scope="module")
def tiny_qa(tmp_path_factory) -> Path:  # type: ignore[no-untyped-def]
    return build_tiny_qa(tmp_path_factory.mktemp("tiny-qa"))


QUESTIONS = ["when did curie win ?", "who shared it ?", "when did marie win again ?",
             "who did win the nobel prize ?", "did pierre win ?"]  # fmt: skip
CONTEXTS = ["marie curie did win the nobel prize in 1903 and again in 1911 .",
            "pierre curie shared it with her in 1903 .",
            "curie did win again in 1911 .",
            "the nobel prize in 1911 ? marie curie did win it .",
            "pierre did win the prize in 1903 and marie did win again in 1911 ."]  # fmt: skip


def brute_force_answer(model_dir: Path, question: str, context: str, longest: int) -> str:
    """One example at a time, unpadded, every span tried in a Python loop: the definition of
    the best span, with none of the runner's batching, sorting or masking."""
    import torch
    from transformers import AutoModelForQuestionAnswering, AutoTokenizer

    tokenizer = AutoTokenizer.from_pretrained(model_dir)
    model = AutoModelForQuestionAnswering.from_pretrained(model_dir).eval()
    encoded = tokenizer(question, context, return_offsets_mapping=True, return_tensors="pt")
    offsets = encoded.pop("offset_mapping")[0].tolist()
    in_context = [sid == 1 for sid in encoded.sequence_ids(0)]
    with torch.no_grad():
        out = model(**encoded)
    starts, ends = out.start_logits[0].tolist(), out.end_logits[0].tolist()
    best = max(
        (starts[s] + ends[e], s, e)
        for s in range(len(starts))
        for e in range(s, min(s + longest, len(ends)))
        if in_context[s] and in_context[e]
    )
    return context[offsets[best[1]][0] : offsets[best[2]][1]]


def test_answers_equal_a_brute_force_reading(tiny_qa: Path) -> None:
    runner = ExtractiveQA(str(tiny_qa), device="cpu", max_length=64, stride=16,
                          max_answer_tokens=5)  # fmt: skip
    done: list[int] = []
    ours = runner.predict(QUESTIONS, CONTEXTS, batch_size=2, progress=done.append)
    expected = [
        brute_force_answer(tiny_qa, q, c, 5) for q, c in zip(QUESTIONS, CONTEXTS, strict=True)
    ]
    assert ours.texts == expected
    assert len(set(expected)) > 1  # the random model does not answer everything alike
    assert sum(done) == len(QUESTIONS)


def test_long_contexts_are_read_in_overlapping_windows(tmp_path: Path) -> None:
    finder = build_tiny_qa(tmp_path / "finder", finder=True)
    runner = ExtractiveQA(str(finder), device="cpu", max_length=24, stride=8,
                          max_answer_tokens=3)  # fmt: skip
    long = " ".join(["filler"] * 120 + ["marie", "did", "win", "in", "1911", "."])
    short = "curie did win in 1911 ."
    answers = runner.predict(["when ?", "when ?"], [long, short], batch_size=4)
    assert answers.texts == ["1911", "1911"]


def test_bad_settings_and_models_are_clear_errors(tiny_qa: Path, tmp_path: Path) -> None:
    with pytest.raises(RunnerError, match="stride"):
        ExtractiveQA(str(tiny_qa), device="cpu", max_length=32, stride=32)
    with pytest.raises(RunnerError, match="Cannot load model"):
        ExtractiveQA(str(tmp_path / "nothing"), device="cpu")
    with pytest.raises(RunnerError, match="CUDA only"):
        ExtractiveQA(str(tiny_qa), device="cpu", precision="fp16")
