"""The models registry: display names, providers, cutoffs, context windows, prices.

The built-in registry (``registry.yaml`` beside this module) is maintained in the
repository: its knowledge cutoffs are checked against the maker's documentation. A
submission's ``model.yaml`` (see ``submissions/README.md``) is a registry file too,
but the cutoff in it is the submitter's word: it is kept apart as *declared*, shown as
"declared by the submitter", and never makes a model count as clean in a
contamination subset. A maintainer who has checked it adds the model to the built-in
registry with ``submitted: true``: that entry is then the model's, whatever the
submission's file says. A submission file cannot redefine any other built-in entry.
"""

from __future__ import annotations

import datetime as dt
import re
from collections.abc import Iterable
from pathlib import Path

import yaml
from pydantic import BaseModel, ConfigDict, PositiveInt, ValidationError, field_validator

from rcb_action.errors import RcbError, format_validation_error
from rcb_action.names import MODEL_NAME, MODEL_NAME_RULE, check_model_name, shown

BUILTIN_REGISTRY = Path(__file__).with_name("registry.yaml")
SUBMISSION_REGISTRY = "model.yaml"
"""The file name of a submission's registry file: its cutoff is declared, not checked."""
DECLARED_NOTE = "declared by the submitter"

_DISPLAY_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9 ._:/@+(),'&-]{0,99}")
_PROVIDER = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,63}")
_SOURCE = re.compile(r"https?://[A-Za-z0-9._~:/?#\[\]@!$&'()*+,;=%-]{1,300}")


class ModelInfo(BaseModel):
    """One registry entry. Every text field is checked: it reaches Markdown, HTML and
    the terminal."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    display_name: str
    provider: str
    knowledge_cutoff: dt.date | None = None
    cutoff_source: str | None = None
    context_window: int | None = None
    input_cost_per_mtok: float | None = None
    output_cost_per_mtok: float | None = None
    litellm_name: str | None = None
    # Calls in flight at once for this model (overrides --concurrency), and the
    # provider's input-token budget per minute on the account used.
    concurrency: PositiveInt | None = None
    tokens_per_minute: PositiveInt | None = None
    # In the built-in registry: a model submitted by pull request (scored from its
    # replay file, not live) whose entry, cutoff included, a maintainer has checked.
    submitted: bool = False

    @field_validator("display_name")
    @classmethod
    def _display_name(cls, value: str) -> str:
        if not _DISPLAY_NAME.fullmatch(value) or value != value.strip():
            raise ValueError(
                "1 to 100 characters: letters, digits, spaces and . _ : / @ + ( ) , ' & -"
            )
        return value

    @field_validator("provider")
    @classmethod
    def _provider(cls, value: str) -> str:
        if not _PROVIDER.fullmatch(value):
            raise ValueError("1 to 64 characters: letters, digits and . _ -")
        return value

    @field_validator("cutoff_source")
    @classmethod
    def _cutoff_source(cls, value: str | None) -> str | None:
        if value is not None and not _SOURCE.fullmatch(value):
            raise ValueError("an http(s) address of at most 300 characters, no spaces")
        return value

    @field_validator("litellm_name")
    @classmethod
    def _litellm_name(cls, value: str | None) -> str | None:
        if value is not None and not MODEL_NAME.fullmatch(value):
            raise ValueError(MODEL_NAME_RULE)
        return value


class Registry:
    """Model name to :class:`ModelInfo`; later files override earlier ones.

    ``declared`` holds the cutoffs that only a submission's ``model.yaml`` gives.
    """

    def __init__(
        self, entries: dict[str, ModelInfo], declared: dict[str, dt.date] | None = None
    ) -> None:
        self._entries = dict(entries)
        self._declared = dict(declared or {})

    def get(self, name: str) -> ModelInfo | None:
        return self._entries.get(name)

    def cutoff(self, name: str) -> dt.date | None:
        """The knowledge cutoff the registry vouches for; None when it has none (a
        cutoff only the submitter declared included: see :meth:`declared_cutoff`)."""
        if name in self._declared:
            return None
        info = self.get(name)
        return info.knowledge_cutoff if info else None

    def declared_cutoff(self, name: str) -> dt.date | None:
        """The cutoff a submitter declared for ``name`` and no checked registry gives."""
        return self._declared.get(name)

    def display_name(self, name: str) -> str:
        info = self.get(name)
        return info.display_name if info else name

    def names(self) -> list[str]:
        return sorted(self._entries)

    def latest_cutoff(self) -> dt.date | None:
        cutoffs = [c for c in map(self.cutoff, self._entries) if c is not None]
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
        # YAML reads `null` as None and `1.5` as a float: a key must be written as text.
        check_model_name(name, f"{path}: key 'models'")
        try:
            out[name] = ModelInfo.model_validate(entry or {})
        except ValidationError as exc:
            raise RcbError(format_validation_error(f"{path}: model {shown(name)}", exc)) from None
    return out


def is_submission_registry(path: Path) -> bool:
    """Whether ``path`` is a submission's registry file, whose cutoffs are declared."""
    return Path(path).name == SUBMISSION_REGISTRY


def load_registry(extra: Iterable[Path] = ()) -> Registry:
    """The built-in registry, overlaid by each file in ``extra`` in order.

    A knowledge cutoff that only a submission's ``model.yaml`` gives is kept as
    declared (see :class:`Registry`); a submission file cannot replace an entry of the
    built-in registry, and is passed over for one marked ``submitted: true``.

    Raises:
        RcbError: a registry file is missing or malformed (one line naming file and key),
            or a submission file redefines a built-in model.
    """
    builtin = _read(BUILTIN_REGISTRY)
    entries = dict(builtin)
    declared: dict[str, dt.date] = {}
    for path in map(Path, extra):
        submitted = is_submission_registry(path)
        for name, info in _read(path).items():
            if submitted and name in builtin:
                if builtin[name].submitted:
                    continue  # checked by a maintainer: the built-in entry stands
                raise RcbError(
                    f"{path}: model {shown(name)} is in the built-in registry; "
                    "a submission cannot redefine it"
                )
            entries[name] = info
            declared.pop(name, None)
            if submitted and info.knowledge_cutoff is not None:
                declared[name] = info.knowledge_cutoff
    return Registry(entries, declared)
