"""The models registry: display names, providers, cutoffs, context windows, prices."""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterable
from pathlib import Path

import yaml
from pydantic import BaseModel, ConfigDict, ValidationError

from rcb_action.errors import RcbError
from rcb_action.tasks._schema import format_validation_error

BUILTIN_REGISTRY = Path(__file__).with_name("registry.yaml")


class ModelInfo(BaseModel):
    """One registry entry."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    display_name: str
    provider: str
    knowledge_cutoff: dt.date | None = None
    cutoff_source: str | None = None
    context_window: int | None = None
    input_cost_per_mtok: float | None = None
    output_cost_per_mtok: float | None = None
    litellm_name: str | None = None


class Registry:
    """Model name to :class:`ModelInfo`; later files override earlier ones."""

    def __init__(self, entries: dict[str, ModelInfo]) -> None:
        self._entries = dict(entries)

    def get(self, name: str) -> ModelInfo | None:
        return self._entries.get(name)

    def cutoff(self, name: str) -> dt.date | None:
        info = self.get(name)
        return info.knowledge_cutoff if info else None

    def display_name(self, name: str) -> str:
        info = self.get(name)
        return info.display_name if info else name

    def names(self) -> list[str]:
        return sorted(self._entries)

    def latest_cutoff(self) -> dt.date | None:
        cutoffs = [i.knowledge_cutoff for i in self._entries.values() if i.knowledge_cutoff]
        return max(cutoffs) if cutoffs else None


def _read(path: Path) -> dict[str, ModelInfo]:
    try:
        raw = yaml.safe_load(path.read_text(encoding="utf-8")) or {}
    except FileNotFoundError:
        raise RcbError(f"{path}: models registry not found") from None
    except UnicodeDecodeError as exc:
        raise RcbError(
            f"{path}: not UTF-8 text (byte 0x{exc.object[exc.start]:02x} at offset {exc.start})"
        ) from None
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f":{mark.line + 1}" if mark is not None else ""
        problem = getattr(exc, "problem", None) or " ".join(str(exc).split())
        raise RcbError(f"{path}{where}: invalid YAML ({problem})") from None
    except OSError as exc:
        raise RcbError(f"{path}: models registry cannot be read ({exc.strerror})") from None
    models = raw.get("models") if isinstance(raw, dict) else None
    if not isinstance(models, dict):
        raise RcbError(f"{path}: expected a top-level 'models:' mapping of model name to entry")
    out: dict[str, ModelInfo] = {}
    for name, entry in models.items():
        try:
            out[str(name)] = ModelInfo.model_validate(entry or {})
        except ValidationError as exc:
            raise RcbError(format_validation_error(f"{path}: model '{name}'", exc)) from None
    return out


def load_registry(extra: Iterable[Path] = ()) -> Registry:
    """The built-in registry, overlaid by each file in ``extra`` in order.

    Raises:
        RcbError: a registry file is missing or malformed (one line naming file and key).
    """
    entries = _read(BUILTIN_REGISTRY)
    for path in extra:
        entries.update(_read(Path(path)))
    return Registry(entries)
