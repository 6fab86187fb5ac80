"""Turn a ``--model`` argument into a :class:`Model`."""

from __future__ import annotations

from pathlib import Path

from rcb_action.errors import RcbError
from rcb_action.models._base import Model
from rcb_action.models._builtin import NullModel, ReferenceModel, ReplayModel
from rcb_action.models._litellm import LiteLLMModel
from rcb_action.models._registry import Registry
from rcb_action.names import check_model_name


def get_model(spec: str, registry: Registry, *, max_concurrency: int = 16) -> Model:
    """``reference``, ``null``, ``replay:FILE`` or any litellm name.

    Raises:
        RcbError: a malformed replay file, an empty name, or a name with characters a
            model name may not have (see :data:`rcb_action.names.MODEL_NAME`).
    """
    if not spec.strip():
        raise RcbError("--model: empty model name")
    if spec == "reference":
        return ReferenceModel()
    if spec == "null":
        return NullModel()
    if spec.startswith("replay:"):
        path = spec.removeprefix("replay:")
        if not path:
            raise RcbError("--model replay:FILE: give the path of a JSONL file of completions")
        return ReplayModel(Path(path))
    check_model_name(spec, "--model")
    return LiteLLMModel(spec, registry.get(spec), max_concurrency=max_concurrency)
