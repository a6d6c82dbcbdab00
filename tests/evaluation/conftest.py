"""A tiny transformers classifier built inside the tests (random BERT weights, a WordLevel
tokenizer), saved to a temp dir and loaded through the real loading code."""

from pathlib import Path

import pytest

VOCAB = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", "the", "film", "was", "good", "bad",
         "not", "great", "awful", "plot", "acting", "a", "."]  # fmt: skip


def build_tiny_classifier(
    directory: Path, labels: tuple[str, ...] = ("negative", "positive")
) -> Path:
    import torch
    from tokenizers import Tokenizer, models, normalizers, pre_tokenizers, processors
    from transformers import BertConfig, BertForSequenceClassification, PreTrainedTokenizerFast

    torch.manual_seed(0)
    vocab = {token: i for i, token in enumerate(VOCAB)}
    core = Tokenizer(models.WordLevel(vocab=vocab, unk_token="[UNK]"))
    core.normalizer = normalizers.Lowercase()
    core.pre_tokenizer = pre_tokenizers.Whitespace()
    core.post_processor = processors.TemplateProcessing(
        single="[CLS] $A [SEP]", pair="[CLS] $A [SEP] $B [SEP]",
        special_tokens=[("[CLS]", vocab["[CLS]"]), ("[SEP]", vocab["[SEP]"])],
    )  # fmt: skip
    tokenizer = PreTrainedTokenizerFast(
        tokenizer_object=core, pad_token="[PAD]", unk_token="[UNK]", cls_token="[CLS]",
        sep_token="[SEP]", mask_token="[MASK]", model_max_length=64,
    )  # fmt: skip
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
