"""Tiny prompted language models built inside the tests: random weights and a byte-level BPE
tokenizer trained here in a moment, saved to a folder and loaded through the real code."""

from pathlib import Path

WORDS = (
    "the film was good bad great awful not a plot acting review sentiment negative positive "
    "question answer context who what where paris london alice bob is in of and it to"
)
CORPUS = [
    "Review: the film was good\nSentiment: positive",
    "Review: the plot was not great\nSentiment: negative",
    "Context: Alice is in Paris.\nQuestion: where is Alice?\nAnswer: Paris",
    *(" ".join(words[i:] + words[:i]) for words in [WORDS.split()] for i in range(len(words))),
]
EOS = "<|endoftext|>"


def bpe_tokenizer(add_bos: bool, add_eos: bool = False, words: tuple[str, ...] = ()):  # type: ignore[no-untyped-def]
    """GPT-2's kind of tokenizer (byte-level BPE, EOS doubling as BOS); `add_bos` makes it add
    the BOS itself, as Llama's does; `add_eos` ends every text with EOS, as T5's does; `words`
    become single tokens (after a space)."""
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, processors, trainers
    from transformers import PreTrainedTokenizerFast

    core = Tokenizer(models.BPE())
    core.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    core.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(
        vocab_size=300, special_tokens=["<pad>", EOS, "<s>"],
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
    )  # fmt: skip
    core.train_from_iterator([*CORPUS, " ".join(words * 200)] if words else CORPUS, trainer)
    if add_bos or add_eos:
        single = ("<s> " if add_bos else "") + "$A" + (f" {EOS}" if add_eos else "")
        specials = [("<s>", core.token_to_id("<s>")), (EOS, core.token_to_id(EOS))]
        core.post_processor = processors.TemplateProcessing(single=single, special_tokens=specials)
    return PreTrainedTokenizerFast(
        tokenizer_object=core, pad_token="<pad>", eos_token=EOS,
        bos_token="<s>" if add_bos else EOS, unk_token=EOS, model_max_length=256,
    )  # fmt: skip


def build_causal(directory: Path, add_bos: bool = False, layers: int = 2) -> Path:
    import torch
    from transformers import GPT2Config, GPT2LMHeadModel

    torch.manual_seed(0)
    tokenizer = bpe_tokenizer(add_bos)
    config = GPT2Config(
        vocab_size=len(tokenizer), n_positions=256, n_embd=32, n_layer=layers, n_head=2,
        bos_token_id=tokenizer.bos_token_id, eos_token_id=tokenizer.eos_token_id,
        pad_token_id=tokenizer.pad_token_id,
    )  # fmt: skip
    GPT2LMHeadModel(config).eval().save_pretrained(directory)
    tokenizer.save_pretrained(directory)
    return directory


def build_seq2seq(directory: Path) -> Path:
    import torch
    from transformers import T5Config, T5ForConditionalGeneration

    torch.manual_seed(0)
    tokenizer = bpe_tokenizer(add_bos=False, add_eos=True)
    config = T5Config(  # type: ignore[call-arg]
        vocab_size=len(tokenizer), d_model=32, d_kv=8, d_ff=64, num_layers=2, num_heads=2,
        decoder_start_token_id=tokenizer.pad_token_id, pad_token_id=tokenizer.pad_token_id,
        eos_token_id=tokenizer.eos_token_id,
    )  # fmt: skip
    T5ForConditionalGeneration(config).eval().save_pretrained(directory)
    tokenizer.save_pretrained(directory)
    return directory
