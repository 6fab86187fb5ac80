"""Stand-in for vllm.config (see vllm/__init__.py)."""


class VllmConfig:
    pass
