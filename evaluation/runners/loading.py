"""The one way a torch runner loads its model and tokenizer (docs/models.md, docs/performance.md).

Every transformers runner (classifier, extractive QA, LM scoring, prompted, the inoculation
trainer) calls `load_model`, so that they all:
- place the model where the spec says: CUDA when present (`device` auto), the precision's
  dtype (fp32; bf16 and fp16 on CUDA only), loaded in that dtype as transformers intends (the
  modules and buffers a model keeps in fp32 stay so), in eval mode;
- refuse a checkpoint that lacks weights its kind needs (`RandomWeights`), unless the spec
  allows random weights;
- answer a source that does not load with one `LoadError`;
- pad on the right with the tokenizer's pad token, or, where it has none (GPT-2 and most
  decoder LMs), with its EOS, which the tokenizer and the model's config then both take as
  their pad token, so a decoder classifier scores batches as it scores one text.

`source` is a hub id or a folder, as the worker's `runs.sources.source_to_load` resolved it:
who may load from a MODELS_DIR folder is a rule about the spec, checked there. What differs from
one runner to another is an argument: the head it needs (for the refusal), whether it needs a
fast tokenizer, fp32 master weights for training, and spreading over several GPUs.
"""

from dataclasses import dataclass
from typing import Any

from evaluation.runners.base import LoadError, RandomWeights, RunnerError


@dataclass
class Loaded:
    model: Any
    tokenizer: Any
    device: str  # "cpu" or "cuda", as the spec resolved
    input_device: str  # where inputs go: `device`, or the first GPU of a spread model
    dtype: Any  # the precision's torch dtype (the weights' too, unless master_fp32)
    pad_id: int


def load_model(
    loader: Any,
    source: str,
    *,
    head: str,
    device: str = "auto",
    precision: str = "fp32",
    allow_random: bool = False,
    needs_fast: str = "",
    master_fp32: bool = False,
    spread: bool = False,
) -> Loaded:
    """`loader` (an AutoModelFor... class) and the tokenizer of `source`, placed and checked.

    - `head`: what the runner's kind needs of the checkpoint, named in the refusal.
    - `needs_fast`: why the runner needs a fast (Rust) tokenizer; empty if it does not.
    - `master_fp32`: keep fp32 weights whatever the precision (training: autocast computes in
      the precision).
    - `spread`: on a worker with several GPUs, let accelerate spread a model too big for one.
    """
    import torch
    from transformers import AutoTokenizer

    device = resolve_device(device)
    dtype = resolve_dtype(precision, device)
    try:
        tokenizer = AutoTokenizer.from_pretrained(source, use_fast=True)
    except (OSError, ValueError) as error:
        raise LoadError(f"Cannot load model {source!r}: {error}") from None
    if needs_fast and not tokenizer.is_fast:
        raise RunnerError(f"Model {source!r} has no fast tokenizer; {needs_fast}.")
    # The runners pad on the right, by hand (the prompted runner's contexts on the left, also by
    # hand); the trainer pads through the tokenizer, so it must too, whatever side was saved.
    tokenizer.padding_side = "right"
    spread = spread and device == "cuda" and torch.cuda.device_count() > 1
    model = _pretrained(
        loader,
        source,
        head=head,
        allow_random=allow_random,
        dtype=torch.float32 if master_fp32 else dtype,
        **({"device_map": "auto"} if spread else {}),
    )
    if not spread:
        model = model.to(device)
    pad_id = pad_token(tokenizer, model)
    return Loaded(
        model=model.eval(),
        tokenizer=tokenizer,
        device=device,
        input_device=str(model.device) if spread else device,
        dtype=dtype,
        pad_id=pad_id,
    )


def load_language_model(source: str, *, seq2seq: bool, **options: Any) -> Loaded:
    """A causal (`hf-causal-lm`) or seq2seq (`hf-seq2seq`) language model, as `load_model`."""
    from transformers import AutoModelForCausalLM, AutoModelForSeq2SeqLM

    loader = AutoModelForSeq2SeqLM if seq2seq else AutoModelForCausalLM
    return load_model(loader, source, head="language-model head", **options)


def pad_token(tokenizer: Any, model: Any) -> int:
    """The id to pad with: the tokenizer's pad token, else its EOS (decoder LMs have no pad
    token), which the tokenizer and the model's config are then given as theirs, else 0."""
    if tokenizer.pad_token_id is None and tokenizer.eos_token_id is not None:
        tokenizer.pad_token = tokenizer.eos_token
    if tokenizer.pad_token_id is None:
        return 0
    if getattr(model.config, "pad_token_id", None) is None:
        model.config.pad_token_id = tokenizer.pad_token_id
    return int(tokenizer.pad_token_id)


def resolve_device(requested: str) -> str:
    import torch

    if requested == "cuda" and not torch.cuda.is_available():
        raise RunnerError("CUDA is not available on this worker; use device auto or cpu.")
    if requested == "auto":
        return "cuda" if torch.cuda.is_available() else "cpu"
    return requested


def resolve_dtype(precision: str, device: str) -> Any:
    """The torch dtype of a precision (docs/performance.md): fp32 everywhere; bf16 and fp16 on
    CUDA."""
    import torch

    dtypes = {"fp32": torch.float32, "bf16": torch.bfloat16, "fp16": torch.float16}
    if precision not in dtypes:
        raise RunnerError(f"Unknown precision {precision!r}; use fp32, bf16 or fp16.")
    if precision != "fp32" and device != "cuda":
        raise RunnerError(f"{precision} runs on CUDA only; use fp32 on the CPU.")
    return dtypes[precision]


def _pretrained(loader: Any, source: str, *, head: str, allow_random: bool, **options: Any) -> Any:
    """`loader.from_pretrained(source)`, refused when the checkpoint lacks weights that
    transformers would initialise at random (`missing_keys` of its loading info), unless the
    spec allows it (docs/models.md). `head` names what the kind needs, for the message."""
    try:
        model, info = loader.from_pretrained(source, output_loading_info=True, **options)
    except (OSError, ValueError) as error:
        raise LoadError(f"Cannot load model {source!r}: {error}") from None
    missing = sorted(info.get("missing_keys") or ())
    if missing and not allow_random:
        shown = ", ".join(missing[:6]) + (
            f" and {len(missing) - 6} more" if len(missing) > 6 else ""
        )
        raise RandomWeights(
            f"The model has no {head}: its checkpoint lacks {shown}, which transformers would "
            "initialise at random, so every prediction would be noise. Register a model "
            f"trained for this task (this checkpoint was saved as {_architectures(model)}), or, "
            "for a deliberate baseline, allow random weights on the model."
        )
    return model


def _architectures(model: Any) -> str:
    names = getattr(model.config, "architectures", None) or ["no architecture"]
    return ", ".join(names)
