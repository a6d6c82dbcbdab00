"""The model's own forward pass, as the oracle of served log-likelihoods: llama-cpp-python's
Python API on the same GGUF file the server serves, asked directly (no server, no client of
ours). A continuation's log-likelihood is the sum, over its tokens t_i, of the log-softmax of
the logits after the tokens before it (row i - 1), at t_i."""

from pathlib import Path

import numpy as np


class ForwardPass:
    def __init__(self, model: Path):
        from llama_cpp import Llama

        self.llm = Llama(
            model_path=str(model), logits_all=True, n_ctx=4096, n_threads=1, verbose=False
        )

    def tokens(self, text: str) -> list[int]:
        """As the server cuts a prompt (llama_cpp's create_completion: BOS where the model
        adds one, special tokens read)."""
        return list(self.llm.tokenize(text.encode(), special=True))

    def logprobs(self, tokens: list[int]) -> np.ndarray:
        """Row i: the log-probabilities of the token after tokens[: i + 1]."""
        self.llm.reset()
        self.llm.eval(tokens)
        logits = np.array(self.llm.scores[: len(tokens)], dtype=np.float64)
        top = logits.max(axis=1, keepdims=True)
        return logits - top - np.log(np.exp(logits - top).sum(axis=1, keepdims=True))

    def loglikelihood(self, context: str, continuation: str) -> float:
        head, whole = self.tokens(context), self.tokens(context + continuation)
        assert whole[: len(head)] == head, "the context's tokens are not a prefix"
        rows = self.logprobs(whole)
        return float(sum(rows[i - 1, whole[i]] for i in range(len(head), len(whole))))

    def rank(self, context: str, token_text: str) -> int:
        """Where the one token `token_text` ranks after `context` (0: the most likely)."""
        head = self.tokens(context)
        (token,) = self.tokens(context + token_text)[len(head) :]
        row = self.logprobs(head)[-1]
        return int((row > row[token]).sum())
