"""A tiny transformers classifier built inside the tests (random BERT weights, a WordLevel
tokenizer), saved to a temp dir and loaded through the real loading code."""

from pathlib import Path

import pytest

VOCAB = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", "the", "film", "was", "good", "bad",
         "not", "great", "awful", "plot", "acting", "a", "."]  # fmt: skip


def bert_word_tokenizer(vocab_list: list[str], max_length: int, second_segment: int = 0):  # type: ignore[no-untyped-def]
    """A BERT-style fast tokenizer over whole lowercase words: [CLS] a [SEP] (b [SEP]), the
    second text with token type `second_segment`."""
    from tokenizers import Tokenizer, models, normalizers, pre_tokenizers, processors
    from transformers import PreTrainedTokenizerFast

    vocab = {token: i for i, token in enumerate(vocab_list)}
    core = Tokenizer(models.WordLevel(vocab=vocab, unk_token="[UNK]"))
    core.normalizer = normalizers.Lowercase()
    core.pre_tokenizer = pre_tokenizers.Whitespace()
    b = f"$B:{second_segment} [SEP]:{second_segment}"
    core.post_processor = processors.TemplateProcessing(
        single="[CLS] $A [SEP]", pair=f"[CLS] $A [SEP] {b}",
        special_tokens=[("[CLS]", vocab["[CLS]"]), ("[SEP]", vocab["[SEP]"])],
    )  # fmt: skip
    return PreTrainedTokenizerFast(
        tokenizer_object=core, pad_token="[PAD]", unk_token="[UNK]", cls_token="[CLS]",
        sep_token="[SEP]", mask_token="[MASK]", model_max_length=max_length,
    )  # fmt: skip


def build_tiny_classifier(
    directory: Path, labels: tuple[str, ...] = ("negative", "positive")
) -> Path:
    import torch
    from transformers import BertConfig, BertForSequenceClassification

    torch.manual_seed(0)
    tokenizer = bert_word_tokenizer(VOCAB, 64)
    config = BertConfig(
        vocab_size=len(VOCAB), hidden_size=16, num_hidden_layers=2, num_attention_heads=2,
        intermediate_size=32, max_position_embeddings=64,
        id2label=dict(enumerate(labels)), label2id={label: i for i, label in enumerate(labels)},
    )  # fmt: skip
    model = BertForSequenceClassification(config).eval()
    model.save_pretrained(directory)
    tokenizer.save_pretrained(directory)
    return directory


@pytest.fixture(scope="session")
def tiny_model(tmp_path_factory) -> Path:  # type: ignore[no-untyped-def]
    return build_tiny_classifier(tmp_path_factory.mktemp("tiny-bert"))


def rule_predictions(release_examples: list[dict]) -> dict[str, str]:
    return {e["id"]: ("negative" if "bad" in e["fields"]["text"] else "positive")
            for e in release_examples}  # fmt: skip


LM_VOCAB = ["<pad>", "</s>", "<s>", "<unk>", "the", "film", "films", "was", "were", "is",
            "are", "good", "bad", "not", "a", "plot", ".", "le", "la", "est", "bon",
            "mauvais"]  # fmt: skip


def _lm_tokenizer(eos_after: bool):  # type: ignore[no-untyped-def]
    from tokenizers import Tokenizer, models, normalizers, pre_tokenizers, processors
    from transformers import PreTrainedTokenizerFast

    vocab = {token: i for i, token in enumerate(LM_VOCAB)}
    core = Tokenizer(models.WordLevel(vocab=vocab, unk_token="<unk>"))
    core.normalizer = normalizers.Lowercase()  # "Good" and "good" are one token: ties happen
    core.pre_tokenizer = pre_tokenizers.Whitespace()
    if eos_after:  # as T5 does: every encoded text ends with </s>
        core.post_processor = processors.TemplateProcessing(
            single="$A </s>", special_tokens=[("</s>", vocab["</s>"])]
        )
    return PreTrainedTokenizerFast(
        tokenizer_object=core, pad_token="<pad>", eos_token="</s>", bos_token="<s>",
        unk_token="<unk>", model_max_length=64,
    )  # fmt: skip


def build_tiny_gpt2(directory: Path) -> Path:
    """A random GPT-2 with a word-level tokenizer; BOS is <s>."""
    import torch
    from transformers import GPT2Config, GPT2LMHeadModel

    torch.manual_seed(0)
    config = GPT2Config(
        vocab_size=len(LM_VOCAB), n_positions=64, n_embd=16, n_layer=2, n_head=2,
        bos_token_id=2, eos_token_id=1, pad_token_id=0,
    )  # fmt: skip
    GPT2LMHeadModel(config).eval().save_pretrained(directory)
    _lm_tokenizer(eos_after=False).save_pretrained(directory)
    return directory


def build_tiny_t5(directory: Path) -> Path:
    """A random T5 with a word-level tokenizer; the decoder starts from <pad>, as T5's does."""
    import torch
    from transformers import T5Config, T5ForConditionalGeneration

    torch.manual_seed(0)
    config = T5Config(  # type: ignore[call-arg]
        vocab_size=len(LM_VOCAB), d_model=16, d_kv=8, d_ff=32, num_layers=2, num_heads=2,
        decoder_start_token_id=0, pad_token_id=0, eos_token_id=1,
    )  # fmt: skip
    T5ForConditionalGeneration(config).eval().save_pretrained(directory)
    _lm_tokenizer(eos_after=True).save_pretrained(directory)
    return directory


@pytest.fixture(scope="session")
def tiny_gpt2(tmp_path_factory) -> Path:  # type: ignore[no-untyped-def]
    return build_tiny_gpt2(tmp_path_factory.mktemp("models") / "gpt2")


@pytest.fixture(scope="session")
def tiny_t5(tmp_path_factory) -> Path:  # type: ignore[no-untyped-def]
    return build_tiny_t5(tmp_path_factory.mktemp("models") / "t5")


@pytest.fixture
def hub_cache(tmp_path, monkeypatch):  # type: ignore[no-untyped-def]
    """A Hugging Face cache of our own, where `hub_cache("org/name")` puts a model's
    config.json as huggingface_hub lays out a download; the hub itself is switched off."""
    from huggingface_hub import constants

    root = tmp_path / "hf-cache"
    monkeypatch.setattr(constants, "HF_HUB_CACHE", str(root))
    monkeypatch.setattr(constants, "HF_HUB_OFFLINE", True)

    def cache(repo_id: str) -> None:
        folder = root / f"models--{repo_id.replace('/', '--')}"
        commit = "0" * 40
        (folder / "refs").mkdir(parents=True)
        (folder / "refs" / "main").write_text(commit)
        (folder / "snapshots" / commit).mkdir(parents=True)
        (folder / "snapshots" / commit / "config.json").write_text('{"model_type": "bert"}')

    return cache
