"""The five transformers runners load through one loader (evaluation/runners/loading.py), so a
checkpoint that lacks its head is refused by each of them in the same words, and a decoder whose
tokenizer has no pad token (GPT-2's) scores a batch as it scores each text alone, in each."""

import re
from pathlib import Path

import pytest

from evaluation.runners.base import LoadError, RandomWeights
from evaluation.runners.classifier import SequenceClassifier
from evaluation.runners.lm import LanguageModelScorer
from evaluation.runners.prompted import PromptedModel
from evaluation.runners.qa import ExtractiveQA
from evaluation.runners.trainer import ClassifierTrainer
from tests.evaluation.conftest import LM_VOCAB, VOCAB, bert_word_tokenizer

RUNNERS = {
    "classifier": lambda source, **extra: SequenceClassifier(source, device="cpu", **extra),
    "qa": lambda source, **extra: ExtractiveQA(source, device="cpu", stride=8, **extra),
    "lm": lambda source, **extra: LanguageModelScorer(source, seq2seq=False, device="cpu", **extra),
    "prompted": lambda source, **extra: PromptedModel(source, seq2seq=False, device="cpu", **extra),
    "trainer": lambda source, **extra: ClassifierTrainer(
        source, label_mapping={}, device="cpu", **extra
    ),
}
HEADS = {
    "classifier": "classification head",
    "qa": r"question-answering head \(span start and end\)",
    "lm": "language-model head",
    "prompted": "language-model head",
    "trainer": "classification head",
}
REFUSAL = (
    r"The model has no {head}: its checkpoint lacks (\S+(, \S+)*( and \d+ more)?), which "
    r"transformers would initialise at random, so every prediction would be noise\. Register a "
    r"model trained for this task \(this checkpoint was saved as BertModel\), or, for a "
    r"deliberate baseline, allow random weights on the model\."
)
TEXTS = ["the film was good", "bad", "the plot was not good .", "a film", "the acting is bad"]
TEXTS += ["not good", "the film was bad .", "a plot", "good good good", "the the the film"]


@pytest.fixture(scope="module")
def headless(tmp_path_factory) -> Path:  # type: ignore[no-untyped-def]
    """A BERT encoder saved alone, as a sentence encoder is: no head of any kind."""
    import torch
    from transformers import BertConfig, BertModel

    torch.manual_seed(0)
    folder = tmp_path_factory.mktemp("headless")
    config = BertConfig(
        vocab_size=len(VOCAB),
        hidden_size=16,
        num_hidden_layers=1,
        num_attention_heads=2,
        intermediate_size=32,
        max_position_embeddings=64,
    )
    BertModel(config).save_pretrained(folder)
    bert_word_tokenizer(VOCAB, 64).save_pretrained(folder)
    return folder


@pytest.mark.parametrize("runner", RUNNERS)
def test_every_runner_refuses_a_headless_checkpoint_in_the_same_words(headless, runner):
    with pytest.raises(RandomWeights) as refused:
        RUNNERS[runner](str(headless))
    assert re.fullmatch(REFUSAL.format(head=HEADS[runner]), str(refused.value)), refused.value


@pytest.mark.parametrize("runner", ["classifier", "qa", "trainer"])
def test_every_runner_loads_random_weights_when_the_model_allows_them(headless, runner):
    """The trainer too: an inoculation's model that allows random weights starts from them."""
    loaded = RUNNERS[runner](str(headless), allow_random=True)
    assert not loaded.model.training  # in eval mode, as every runner is loaded


@pytest.mark.parametrize("runner", RUNNERS)
def test_every_runner_answers_a_missing_model_with_one_error(tmp_path, runner):
    with pytest.raises(LoadError, match=r"^Cannot load model '.*nothing': "):
        RUNNERS[runner](str(tmp_path / "nothing"))


def no_pad_tokenizer(padding_side: str = "right"):  # type: ignore[no-untyped-def]
    """GPT-2's habit: an EOS and a BOS, no pad token."""
    from tokenizers import Tokenizer, models, normalizers, pre_tokenizers
    from transformers import PreTrainedTokenizerFast

    vocab = {token: i for i, token in enumerate(LM_VOCAB)}
    core = Tokenizer(models.WordLevel(vocab=vocab, unk_token="<unk>"))
    core.normalizer = normalizers.Lowercase()
    core.pre_tokenizer = pre_tokenizers.Whitespace()
    return PreTrainedTokenizerFast(
        tokenizer_object=core,
        eos_token="</s>",
        bos_token="<s>",
        unk_token="<unk>",
        model_max_length=64,
        padding_side=padding_side,
    )


@pytest.fixture(scope="module")
def decoders(tmp_path_factory) -> dict[str, Path]:  # type: ignore[no-untyped-def]
    """Tiny GPT-2s with each head, whose config and tokenizer name no pad token."""
    import torch
    from transformers import (
        GPT2Config,
        GPT2ForQuestionAnswering,
        GPT2ForSequenceClassification,
        GPT2LMHeadModel,
    )

    root = tmp_path_factory.mktemp("no-pad")
    heads = {
        "classifier": GPT2ForSequenceClassification,
        "qa": GPT2ForQuestionAnswering,
        "lm": GPT2LMHeadModel,
    }
    folders = {}
    for name, model in heads.items():
        torch.manual_seed(0)
        config = GPT2Config(
            vocab_size=len(LM_VOCAB),
            n_positions=64,
            n_embd=16,
            n_layer=2,
            n_head=2,
            bos_token_id=2,
            eos_token_id=1,
            id2label={0: "negative", 1: "positive"},
        )
        assert config.pad_token_id is None
        folders[name] = root / name
        model(config).eval().save_pretrained(folders[name])
        # The classifier's saved to pad on the left, as some LLMs' are.
        tokenizer = no_pad_tokenizer("left" if name == "classifier" else "right")
        assert tokenizer.pad_token_id is None
        tokenizer.save_pretrained(folders[name])
    return folders


def test_a_classifier_without_a_pad_token_scores_a_batch_as_each_text_alone(decoders):
    """transformers refuses a batch to a decoder classifier that knows no pad token."""
    runner = SequenceClassifier(str(decoders["classifier"]), device="cpu")
    batched = runner.predict([[t] for t in TEXTS], batch_size=5).probabilities
    alone = [runner.predict([[t]], batch_size=1).probabilities[0] for t in TEXTS]
    for b, a in zip(batched, alone, strict=True):
        assert b == pytest.approx(a, abs=1e-5)


def test_the_trainer_scores_a_batch_as_the_classifier_scores_each_text(decoders):
    """The trainer pads through the tokenizer: with no pad token it refused to pad, and where the
    tokenizer was saved to pad on the left, every text's positions moved, so that the model
    scored other numbers than the classifier's (half the labels differed here)."""
    trainer = ClassifierTrainer(
        str(decoders["classifier"]), label_mapping={}, device="cpu", batch_size=len(TEXTS)
    )
    alone = SequenceClassifier(str(decoders["classifier"]), device="cpu").predict(
        [[t] for t in TEXTS], batch_size=1
    )
    assert trainer.accuracy(TEXTS, alone.labels) == 1.0
    labels = ["positive", "negative"] * (len(TEXTS) // 2)
    epoch = trainer.fine_tune(
        TEXTS, labels, learning_rate=1e-3, max_epochs=2, seed=0, early_stopping=(TEXTS, labels)
    )
    assert 0 <= epoch <= 2


def test_a_reader_without_a_pad_token_answers_a_batch_as_each_question_alone(decoders):
    runner = ExtractiveQA(str(decoders["qa"]), device="cpu", max_length=32, stride=8)
    questions, contexts = ["the film", "the plot"], ["the film was good .", "a plot was bad"]
    batched = runner.predict(questions, contexts, batch_size=2)
    alone = [
        runner.predict([q], [c], batch_size=1) for q, c in zip(questions, contexts, strict=True)
    ]
    assert batched.texts == [a.texts[0] for a in alone]
    assert batched.scores == pytest.approx([a.scores[0] for a in alone], abs=1e-4)


def test_the_language_model_runners_without_a_pad_token_score_a_batch_as_each_text_alone(
    decoders,
):
    scorer = LanguageModelScorer(str(decoders["lm"]), seq2seq=False, device="cpu")
    sources = [None] * len(TEXTS)
    batched = scorer.score(TEXTS, sources, batch_size=5)
    alone = [scorer.score([t], [None], batch_size=1)[0] for t in TEXTS]
    assert batched == pytest.approx(alone, abs=1e-5)

    prompted = PromptedModel(str(decoders["lm"]), seq2seq=False, device="cpu", batch_size=2)
    contexts, choices = ["the film was", "the plot is"], [[" good", " bad ."], [" not good"]]
    together = prompted.loglikelihoods(contexts, choices)
    prompted.batch_size = 1
    each = [prompted.loglikelihoods([c], [o])[0] for c, o in zip(contexts, choices, strict=True)]
    for t, e in zip(together, each, strict=True):
        assert t == pytest.approx(e, abs=1e-5)
    assert scorer.pad_id == prompted.pad_id == no_pad_tokenizer().eos_token_id


def test_no_runner_loads_a_model_or_tokenizer_but_through_the_loader():
    """The copies this replaced drifted: one runner lacked the random-weights check."""
    runners = Path(__file__).resolve().parents[3] / "evaluation" / "runners"
    loading = {
        path.name
        for path in runners.glob("*.py")
        if "from_pretrained(" in path.read_text() or "AutoTokenizer" in path.read_text()
    }
    assert loading == {"loading.py"}
