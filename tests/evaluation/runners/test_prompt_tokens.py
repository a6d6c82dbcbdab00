"""A prompted model's tokens in batches (evaluation/runners/prompt_tokens.py), held to
lm-evaluation-harness's own split of each request, one at a time, over fast and slow
tokenizers; and its log-likelihoods, in fp32, to a float64 computation written here."""

import pytest

from evaluation.runners.base import RunnerError
from evaluation.runners.prompt_tokens import PromptTokens
from tests.evaluation.llm import bpe_tokenizer, build_causal, build_seq2seq

MAX_LENGTH = 64  # short, so that the long contexts below are cut

CONTEXTS = [
    "Review: the film was good\nSentiment:",
    "Review: the film was good\nSentiment: ",  # the space moves to the choice
    "Review: a good plot\nSentiment:  \n",
    "",  # the prefix token is the context
    "   ",  # nothing is left once the spaces move
    "Critique : le film était génial 🎬 — 非常好\nSentiment:",
    "the film was good and the acting great " * 40 + "\nSentiment:",  # cut on the left
    "Review: the film was good\nSentiment:",  # a repeat: tokenised once, scored twice
]
CHOICES = [" positive", "great", " the plot was not great at all", "é 🎬", "\n"]


def byt5():  # type: ignore[no-untyped-def]
    from transformers import ByT5Tokenizer

    return ByT5Tokenizer()


# name: (tokenizer, seq2seq): byte-level BPE without and with a BOS of its own, with an EOS at
# the end (T5's habit), and ByT5's slow (pure Python) tokenizer
TOKENIZERS = {
    "bpe": (lambda: bpe_tokenizer(add_bos=False), False),
    "bpe-bos": (lambda: bpe_tokenizer(add_bos=True), False),
    "bpe-eos-seq2seq": (lambda: bpe_tokenizer(add_bos=False, add_eos=True), True),
    "bpe-bos-seq2seq": (lambda: bpe_tokenizer(add_bos=True), True),
    "byt5-slow": (byt5, False),
    "byt5-slow-seq2seq": (byt5, True),
}


def harness_for(tokenizer, seq2seq):  # type: ignore[no-untyped-def]
    """The harness's HFLM with only a tokenizer: its `_encode_pair` and `tok_encode` are the
    rules, and `prefix_token_id` the token of an empty context."""
    from lm_eval.models.huggingface import HFLM

    lm = HFLM.__new__(HFLM)
    lm.tokenizer, lm.add_bos_token, lm.custom_prefix_token_id = tokenizer, None, None
    lm.backend = "seq2seq" if seq2seq else "causal"
    return lm


def harness_pair(lm, context, continuation):  # type: ignore[no-untyped-def]
    """HFLM.loglikelihood's tokens of one request (its rule for an empty context is inline)."""
    if context:
        return lm._encode_pair(context, continuation)
    ids = lm.tok_encode(continuation, add_special_tokens=False)
    if ids[0] != lm.prefix_token_id:
        return [lm.prefix_token_id], ids
    return ids[:1], ids[1:]


def expected_units(lm, contexts, choices):  # type: ignore[no-untyped-def]
    """Example by example: one unit per distinct context ids, cut on the left so that the
    context and its longest continuation fit MAX_LENGTH + 1 tokens."""
    out = []
    for example, (context, options) in enumerate(zip(contexts, choices, strict=True)):
        units: dict[tuple[int, ...], dict] = {}
        for choice, option in enumerate(options):
            head, tail = harness_pair(lm, context, option)
            unit = units.setdefault(tuple(head), {"continuations": [], "choices": []})
            unit["continuations"].append(tail)
            unit["choices"].append(choice)
        for n, (head, unit) in enumerate(units.items()):
            keep = max(MAX_LENGTH + 1 - max(map(len, unit["continuations"])), 1)
            context_ids = list(head)[-keep:] if len(head) > keep else list(head)
            last = n == len(units) - 1
            out.append((example, context_ids, unit["continuations"], unit["choices"], last))
    return out


def cases(tokenizer):  # type: ignore[no-untyped-def]
    """CONTEXTS with every few CHOICES; where the tokenizer has a BOS, a context and a choice
    that start with its text."""
    contexts = list(CONTEXTS)
    choices = [CHOICES[n % 3 :] for n in range(len(contexts))]
    if tokenizer.bos_token is not None:
        bos = tokenizer.bos_token
        contexts += [f"{bos}Review: the film was good\nSentiment:", ""]
        choices += [[" positive", " negative"], [f"{bos} good", " good"]]
    return contexts, choices


@pytest.mark.parametrize("name", TOKENIZERS)
def test_batched_units_are_the_harnesss_tokens_request_by_request(name):
    build, seq2seq = TOKENIZERS[name]
    tokenizer = build()
    lm = harness_for(tokenizer, seq2seq)
    tokens = PromptTokens(
        tokenizer, seq2seq=seq2seq, prefix_id=lm.prefix_token_id, max_length=MAX_LENGTH
    )
    contexts, choices = cases(tokenizer)
    units = tokens.units(contexts, choices)
    got = [(u.example, u.context, u.continuations, u.choices, u.last) for u in units]
    assert got == expected_units(lm, contexts, choices)
    assert any(len(harness_pair(lm, contexts[6], c)[0]) > MAX_LENGTH for c in CHOICES)
    for context, options in zip(contexts, choices, strict=True):
        for option in options:
            assert tokens.pairs([context], [[option]]) == [[harness_pair(lm, context, option)]]
    assert tokens.encode_many(contexts) == {c: tokens.encode(c) for c in contexts}


def test_a_choice_with_no_tokens_after_the_prompt_is_refused_by_name():
    tokenizer = bpe_tokenizer(add_bos=False)
    tokens = PromptTokens(tokenizer, seq2seq=False, prefix_id=1, max_length=MAX_LENGTH)
    with pytest.raises(RunnerError, match="The choice '' has no tokens after the prompt"):
        tokens.units(["Review: good", "Review: bad"], [[" great"], [" great", ""]])


# Log-likelihoods: fp32 on the CPU against float64 -------------------------------------------


@pytest.fixture(scope="module")
def models(tmp_path_factory):  # type: ignore[no-untyped-def]
    root = tmp_path_factory.mktemp("prompt-tokens")
    return {
        "causal": (build_causal(root / "causal"), False),
        "causal-bos": (build_causal(root / "causal-bos", add_bos=True), False),
        "seq2seq": (build_seq2seq(root / "seq2seq"), True),
    }


def float64_loglikelihood(model, head, tail, seq2seq):  # type: ignore[no-untyped-def]
    import torch

    with torch.no_grad():
        if seq2seq:
            logits = model(input_ids=torch.tensor([head]), labels=torch.tensor([tail])).logits[0]
            return float(sum(torch.log_softmax(logits, -1)[i, t] for i, t in enumerate(tail)))
        logprobs = torch.log_softmax(model(torch.tensor([head + tail])).logits[0], -1)
    return float(sum(logprobs[len(head) + i - 1, t] for i, t in enumerate(tail)))


@pytest.mark.parametrize("name", ["causal", "causal-bos", "seq2seq"])
def test_fp32_loglikelihoods_are_the_float64_ones(models, name, monkeypatch):
    """The runner's sums of log-probabilities, in chunks tokenised ahead and batches of padded
    rows with a shared context cache, are a float64 model's over each context and choice
    alone; every example is counted done once."""
    from transformers import AutoModelForCausalLM, AutoModelForSeq2SeqLM

    from evaluation.runners import prompted
    from evaluation.runners.prompted import PromptedModel

    monkeypatch.setattr(prompted, "CHUNK", 3)

    path, seq2seq = models[name]
    runner = PromptedModel(str(path), seq2seq=seq2seq, device="cpu", precision="fp32", batch_size=2)
    runner.tokens.max_length = runner.max_length = MAX_LENGTH
    contexts = CONTEXTS[:4] + CONTEXTS[5:]  # "   " leaves a causal model no context token
    choices = [CHOICES[n % 3 :] for n in range(len(contexts))]
    done: list[int] = []
    lls = runner.loglikelihoods(contexts, choices, progress=done.append)
    assert sum(done) == len(contexts)
    loader = AutoModelForSeq2SeqLM if seq2seq else AutoModelForCausalLM
    reference = loader.from_pretrained(path).double().eval()
    units = runner.units(contexts, choices)
    for unit in units:
        for choice, tail in zip(unit.choices, unit.continuations, strict=True):
            expected = float64_loglikelihood(reference, unit.context, tail, seq2seq)
            assert lls[unit.example][choice] == pytest.approx(expected, abs=1e-4)
    assert len(units) == len(contexts) and all(u.last for u in units)
