"""The ``task.yaml`` schema. Unknown, missing or ill-typed keys are errors."""

from __future__ import annotations

import datetime as dt
import re
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

_ARXIV_ID = re.compile(r"^\d{4}\.\d{4,5}$")


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class PaperSource(_Strict):
    """Where the paper text given to the model comes from.

    ``local`` reads ``paper.md`` in the task folder; ``arxiv`` fetches the paper's
    HTML full text once when online and caches it (``paper.md`` is the fallback).
    """

    source: Literal["local", "arxiv"] = "local"


class SnippetConfig(_Strict):
    """Per-snippet settings: the pytest node ids that decide this snippet."""

    tests: list[str] = Field(min_length=1)


class TaskConfig(_Strict):
    """One task's ``task.yaml``."""

    id: str = Field(pattern=r"^[a-z0-9][a-z0-9_-]*$")
    title: str = Field(min_length=1)
    arxiv: str
    published: dt.date
    code_first_commit: dt.date | None = None
    code_url: str | None = None
    domain: str = Field(pattern=r"^[a-z][a-z0-9_-]*$")
    kind: Literal["snippet", "reproduction"] = "snippet"
    env: str = Field(pattern=r"^[A-Za-z0-9][A-Za-z0-9_.-]*$")
    gpu: Literal["none", "optional", "required"] = "none"
    timeout_s: int = Field(default=60, gt=0, le=3600)
    annotated: list[str] = Field(default_factory=list)
    context: list[str] = Field(default_factory=list)
    paper: PaperSource = PaperSource()
    snippets: dict[str, SnippetConfig] = Field(default_factory=dict)
    tests_dir: str = "tests"

    @field_validator("arxiv")
    @classmethod
    def _arxiv_id(cls, value: str) -> str:
        if not _ARXIV_ID.match(value):
            raise ValueError(f"'{value}' is not a new-style arXiv id like 2503.10622 (quote it)")
        return value


def format_validation_error(path: str, error: ValidationError) -> str:
    """One line naming the file and the first offending key."""
    first = error.errors()[0]
    key = ".".join(str(part) for part in first["loc"]) or "(top level)"
    kind = first["type"]
    if kind == "extra_forbidden":
        return f"{path}: unknown key '{key}'"
    if kind == "missing":
        return f"{path}: missing required key '{key}'"
    message = first["msg"]
    if message.startswith("Value error, "):
        message = message[len("Value error, ") :]
    given = first.get("input")
    shown = "" if isinstance(given, dict | list) else f" (got {given!r})"
    return f"{path}: key '{key}': {message}{shown}"
