"""Models: litellm for every provider, and the built-ins ``reference``, ``null``, ``replay:FILE``."""

from rcb_action.models._base import Completion, CompletionRequest, Model, ModelCallError
from rcb_action.models._builtin import NullModel, ReferenceModel, ReplayModel
from rcb_action.models._litellm import LiteLLMModel
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
    "get_model",
    "load_registry",
]
