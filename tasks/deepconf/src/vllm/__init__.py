"""Stand-in for the parts of vLLM that deepconf imports (not the authors' code; see notes.md).

vLLM needs a GPU build and is not installed in this task's environment. deepconf's
modules import ``LLM`` and ``SamplingParams`` at module level; the cases never start
an engine: they give ``DeepThinkLLM`` a scripted engine of their own.
"""


class SamplingParams:
    """The sampling settings deepconf reads and writes: a plain attribute bag."""

    def __init__(self, temperature=1.0, top_p=1.0, max_tokens=16, logprobs=None, seed=None, n=1, extra_args=None):
        self.temperature = temperature
        self.top_p = top_p
        self.max_tokens = max_tokens
        self.logprobs = logprobs
        self.seed = seed
        self.n = n
        self.extra_args = extra_args

    def __repr__(self):
        return f"SamplingParams(temperature={self.temperature}, top_p={self.top_p}, max_tokens={self.max_tokens})"


class LLM:
    """No engine here: constructing one is an error."""

    def __init__(self, *args, **kwargs):
        raise RuntimeError("vLLM is not available in this environment; give DeepThinkLLM an engine object")
