"""Models: litellm for every provider, and the built-ins ``reference``, ``null``, ``replay:FILE``."""

from rcb_action.models._base import Completion, CompletionRequest, Model, ModelCallError
from rcb_action.models._builtin import (
    NullModel,
    ReferenceModel,
    ReplayModel,
    fenced,
    read_replay,
)
from rcb_action.models._limits import CallLimiter, retry_after_s
from rcb_action.models._litellm import LiteLLMModel, estimate_tokens, import_litellm
from rcb_action.models._registry import (
    DECLARED_NOTE,
    SUBMISSION_REGISTRY,
    ModelInfo,
    Registry,
    load_registry,
)
from rcb_action.models._resolve import get_model

__all__ = [
    "DECLARED_NOTE",
    "SUBMISSION_REGISTRY",
    "CallLimiter",
    "Completion",
    "CompletionRequest",
    "LiteLLMModel",
    "Model",
    "ModelCallError",
    "ModelInfo",
    "NullModel",
    "ReferenceModel",
    "Registry",
    "ReplayModel",
    "estimate_tokens",
    "fenced",
    "get_model",
    "import_litellm",
    "load_registry",
    "read_replay",
    "retry_after_s",
]
