"""``verdict.json``: the validation verdict as data, the only thing the trusted commenter reads.

The validation job runs a pull request's code, so everything it writes is untrusted.
It writes this structured verdict (never Markdown); the ``workflow_run`` job reads it
through :class:`Verdict` (strict: unknown keys, wrong types, unknown statuses and
oversized files are refused in one line) and renders the comment itself, escaping
every string (:mod:`rcb_action.github._verdict`).
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Literal

from pydantic import BaseModel, ConfigDict, Field, StringConstraints, ValidationError

from rcb_action.errors import RcbError

VERDICT_FILE = "verdict.json"
SCHEMA_VERSION: Literal[1] = 1
# Refused beyond these (the renderer clips far shorter; these only bound the parse).
MAX_FILE_BYTES = 4 * 1024 * 1024
MAX_TEXT_CHARS = 200_000
MAX_ITEMS = 500
MAX_PROBLEMS = 500
MAX_LOG_CHARS = 20_000

Status = Literal["passed", "failed", "not validated"]
Text = Annotated[str, StringConstraints(max_length=MAX_TEXT_CHARS)]
Name = Annotated[str, StringConstraints(min_length=1, max_length=MAX_TEXT_CHARS)]


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True, strict=True)


class ItemVerdict(_Strict):
    """One task folder or submission folder: its status and why (plain strings)."""

    status: Status
    problems: list[Text] = Field(default_factory=list, max_length=MAX_PROBLEMS)


class Section(_Strict):
    """The tasks, or the submissions, of a pull request."""

    items: dict[Name, ItemVerdict] = Field(default_factory=dict, max_length=MAX_ITEMS)
    # Problems of the section as a whole (the changed-folder check failed, ...).
    problems: list[Text] = Field(default_factory=list, max_length=MAX_PROBLEMS)
    log: Text = ""  # the renderer shows its last MAX_LOG_CHARS

    @property
    def status(self) -> Status | None:
        """failed, else not validated, else passed; None when the section is empty."""
        statuses = {item.status for item in self.items.values()}
        if self.problems or "failed" in statuses:
            return "failed"
        if "not validated" in statuses:
            return "not validated"
        return "passed" if statuses else None


class ModelScore(_Strict):
    """One scored submission's model (from the replay evaluation's report)."""

    model: Name
    # Percent, as report.json gives them.
    scaled_pass_at_1: float | None = Field(default=None, ge=0.0, le=100.0)
    pass_rate: float | None = Field(default=None, ge=0.0, le=100.0)
    snippets: int = Field(default=0, ge=0)
    harness_errors: int = Field(default=0, ge=0)


class Verdict(_Strict):
    """The whole verdict of one validation run of one pull-request commit."""

    schema_version: Literal[1]  # required: a file of another version is refused
    pull: int = Field(ge=1)
    head_sha: str = Field(pattern=r"^[0-9a-f]{40}$")
    tasks: Section = Section()
    submissions: Section = Section()
    scores: list[ModelScore] = Field(default_factory=list, max_length=MAX_ITEMS)

    @property
    def status(self) -> Status:
        """failed when anything failed, else not validated when anything could not be
        run here (never passed), else passed (also when nothing changed)."""
        statuses = {self.tasks.status, self.submissions.status}
        if "failed" in statuses:
            return "failed"
        if "not validated" in statuses:
            return "not validated"
        return "passed"


def read_verdict(path: Path) -> Verdict:
    """Read and check ``verdict.json`` (untrusted: a pull request's run wrote it).

    Raises:
        RcbError: unreadable, too large, or not a verdict (one line).
    """
    path = Path(path)
    try:
        size = path.stat().st_size
        if size > MAX_FILE_BYTES:
            raise RcbError(f"{path}: {size} bytes, over the {MAX_FILE_BYTES} a verdict may have")
        data = path.read_bytes()
    except OSError as exc:
        raise RcbError(f"{path}: cannot read the verdict ({exc.strerror or exc})") from None
    try:
        return Verdict.model_validate_json(data)
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(part) for part in first["loc"])[:80] or "(top)"
        raise RcbError(
            f"{path}: not a verdict ({exc.error_count()} error(s); first at {where!r}: "
            f"{first['msg'][:120]})".replace("\n", " ")
        ) from None


def write_verdict(path: Path, verdict: Verdict) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(verdict.model_dump_json(indent=2) + "\n", encoding="utf-8")
