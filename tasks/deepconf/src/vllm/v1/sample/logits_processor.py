"""Stand-in for vllm.v1.sample.logits_processor (see vllm/__init__.py)."""

from typing import Callable

RequestLogitsProcessor = Callable


class AdapterLogitsProcessor:
    def __init__(self, vllm_config, device, is_pin_memory):
        self.vllm_config = vllm_config
        self.device = device
        self.is_pin_memory = is_pin_memory
