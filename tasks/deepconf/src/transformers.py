"""Stand-in for transformers.AutoTokenizer, which deepconf's wrapper imports (see vllm/__init__.py)."""


class AutoTokenizer:
    @classmethod
    def from_pretrained(cls, *args, **kwargs):
        raise RuntimeError("transformers is not available in this environment")
