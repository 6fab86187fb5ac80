"""The report's one model: what ``report.json`` holds, typed and versioned.

Every consumer (the terminal tables, Markdown, the site, the pull-request comment, the
comparison with the base branch) reads a report through :class:`Report`, never by string
keys. ``docs/report.schema.json`` is :meth:`Report.model_json_schema` (``rcb report
--schema`` prints it); a test keeps the two equal.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from rcb_action.errors import RcbError

SCHEMA_VERSION = 1
"""Raised whenever a field changes meaning, is renamed or removed (adding one too,
since extra fields are refused)."""


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class Summary(_Strict):
    """The scores of one set of attempts."""

    scaled_pass_at_1: float | None = Field(
        description="Percent, each snippet weighted by its code lines (None: nothing scored)."
    )
    pass_rate: float | None = Field(description="Percent of attempts passed, unweighted.")
    ci95: list[float] | None = Field(
        description="95% bootstrap interval of scaled pass@1 over snippets, [low, high]."
    )
    snippets: int = Field(description="Snippets with at least one scored attempt.")
    weighted_lines: int = Field(description="Code lines of those snippets.")
    samples: int = Field(description="Distinct sample indices scored.")


class TaskScore(_Strict):
    """One task's scores for one model."""

    scaled_pass_at_1: float | None
    pass_rate: float | None
    weight: float = Field(description="The lines of the task's scored snippets.")
    grading: Literal["cases", "in-process"] = Field(
        description="'cases': every verdict came from the separate check sandbox; "
        "'in-process': pytest imported the model's code, so a pass can be forged."
    )


class PostCutoff(Summary):
    """The scores on the papers first posted after the model's knowledge cutoff."""

    cutoff: str | None = Field(description="The cutoff (ISO date); None when not known.")
    declared: bool = Field(description="The cutoff was declared by a submitter, not checked.")
    note: str | None
    tasks: list[str]


class PromptCache(_Strict):
    """What the provider's prompt cache served, over every attempt of the model."""

    tokens_in: int
    tokens_cached: int
    cost_saved_usd: float


class AgentMode(_Strict):
    """``rcb evaluate --agent-turns K``: pass@1 against pass after K rewrites."""

    attempts: int
    snippets: int
    scaled_pass_at_1: float | None
    scaled_pass_after_k: float | None
    pass_rate_at_1: float | None
    pass_rate_after_k: float | None
    fixed: int
    broken: int
    mean_turns_used: float | None


Outcome = tuple[str, str, int, int, int]
"""One scored attempt: task, snippet, sample, weight (lines), passed (0 or 1)."""


class ModelEntry(Summary):
    """One model's results: the headline scores are of its attempts with the paper
    (without it when it never had the paper, see ``paper``)."""

    display_name: str
    provider: str
    knowledge_cutoff: str | None
    cutoff_declared: bool
    paper: bool = Field(description="Whether the headline attempts had the paper.")
    macro_task_mean: float | None = Field(description="The mean of per-task scaled pass@1.")
    pass_at_k: dict[str, float | None]
    tasks: dict[str, TaskScore]
    forgeable_snippets: int = Field(description="Snippets graded by in-process tests.")
    outcomes: list[Outcome] = Field(
        description="Every scored attempt, what a paired comparison resamples."
    )
    failure_classes: dict[str, int]
    harness_errors: int
    skipped: int
    skip_reasons: list[str]
    paper_truncated: int
    cost_usd: float
    tokens_in: int
    tokens_out: int
    batched: int = Field(description="Answers that came through the provider's batch API.")
    post_cutoff: PostCutoff
    no_paper: Summary | None = Field(
        default=None, description="The no-paper ablation, when run beside the paper."
    )
    notes: Summary | None = Field(
        default=None, description="The task's notes instead of the paper: never a headline."
    )
    prompt_cache: PromptCache
    agent_mode: dict[str, AgentMode] = Field(
        default_factory=dict, description="Per K of --agent-turns K."
    )


class PaperSha(_Strict):
    """The sha256 of the paper text a task's prompts carried."""

    paper_sha: str = Field(description="The latest record's.")
    paper_shas: list[str] | None = Field(
        default=None, description="Every distinct one, when the text changed between runs."
    )


class CommonPostCutoff(_Strict):
    """The scores on the papers after every model's checked cutoff."""

    after: str
    models: dict[str, Summary]
    tasks: list[str]
    models_without_cutoff: list[str]
    models_with_declared_cutoff: list[str]


class PairedComparison(_Strict):
    """The top model against another on the snippets both attempted."""

    a: str
    b: str
    difference: float = Field(description="Scaled pass@1 of a minus b, points.")
    ci95_low: float
    ci95_high: float
    snippets: int


class FunnelStep(_Strict):
    """One stage of the reproduction funnel."""

    stage: str
    label: str
    passed: int
    share: float | None
    reached: int
    failed_when_reached: float | None


class LiveSubset(_Strict):
    """Reproduction attempts on papers after a cutoff."""

    attempts: int
    tasks: list[str]
    failure_rates: dict[str, float | None]
    full_reproduction: float | None


class ModelLiveSubset(LiveSubset):
    """A model's reproduction attempts on papers after its own cutoff."""

    cutoff: str | None
    note: str | None


class ReproductionModel(_Strict):
    """One model on the reproduction track."""

    attempts: int
    tasks: int
    harness_errors: int
    failure_rates: dict[str, float | None]
    graded: dict[str, int]
    funnel: list[FunnelStep]
    failed_stages: dict[str, int]
    plan_score: float | None
    execution_success: float | None
    full_reproduction: float | None
    plan_execution_gap: float | None
    needs_review: int
    cost_usd: float
    turns: int
    post_cutoff: ModelLiveSubset | None = None


class ReproductionCommon(_Strict):
    """Reproduction attempts on papers after every model's cutoff."""

    after: str
    models: dict[str, LiveSubset]
    tasks: list[str]
    models_without_cutoff: list[str]


class ReviewItem(_Strict):
    """An attempt flagged for a person to review."""

    task: str
    model: str
    sample: int
    reasons: list[str]
    log_dir: str | None


class ReproductionSection(_Strict):
    """The reproduction track (``rcb reproduce``)."""

    attempts: int
    dimensions: dict[str, str]
    stages: dict[str, str]
    models: dict[str, ReproductionModel]
    funnel: list[FunnelStep]
    needs_review: list[ReviewItem]
    invalid_tasks: dict[str, dict[str, Any]] = Field(
        description="Tasks whose gold run failed: their gold summary."
    )
    targets: dict[str, str] = Field(
        description="Per task: 'paper' (the paper's numbers) or 'gold' (rcb's gold run)."
    )
    common_post_cutoff: ReproductionCommon | None = None


class Report(_Strict):
    """``report.json``: scores per model with intervals, per task, failure classes,
    contamination subsets, and what benchmark and rcb produced them."""

    schema_version: Literal[1] = Field(description="This model's version (see SCHEMA_VERSION).")
    rcb_version: str = Field(description="The rcb that built the report.")
    source: str = Field(description="The results folder(s) the report was built from.")
    records: int = Field(description="Attempt records read.")
    task_shas: dict[str, str] = Field(
        description="Each task's hash as its records were scored ('mixed' when they disagree)."
    )
    tasks_sha: str = Field(description="One hash of task_shas: the same benchmark exactly.")
    models: dict[str, ModelEntry]
    papers: dict[str, PaperSha]
    common_post_cutoff: CommonPostCutoff | None = None
    comparisons: list[PairedComparison]
    reproduction: ReproductionSection | None = None

    @classmethod
    def from_data(cls, data: Any, *, source: str = "report.json") -> Report:
        """A report from parsed JSON.

        Raises:
            RcbError: one line naming ``source`` and the first bad field.
        """
        if isinstance(data, dict) and "schema_version" not in data and "models" in data:
            raise RcbError(
                f"{source}: schema_version missing: written by an rcb from before versioned "
                "reports; rerun rcb report on the results folder"
            )
        try:
            return cls.model_validate(data)
        except ValidationError as exc:
            raise RcbError(validation_line(source, exc)) from None

    @classmethod
    def load(cls, path: Path) -> Report:
        """The report in the JSON file at ``path``.

        Raises:
            RcbError: the file is missing, not JSON, or not a report of this version.
        """
        try:
            data = json.loads(Path(path).read_text(encoding="utf-8"))
        except FileNotFoundError:
            raise RcbError(
                f"{path}: report not found (rcb report DIR --json FILE writes one)"
            ) from None
        except (json.JSONDecodeError, UnicodeDecodeError) as exc:
            raise RcbError(f"{path}: not a JSON report ({exc})") from None
        return cls.from_data(data, source=str(path))

    def below(self, threshold: float) -> list[str]:
        """``"MODEL SCORE"`` for each model whose scaled pass@1 is under ``threshold``
        (no score counts as 0): what ``--fail-under`` fails on."""
        return [
            f"{name} {entry.scaled_pass_at_1}"
            for name, entry in self.models.items()
            if (entry.scaled_pass_at_1 or 0.0) < threshold
        ]

    def to_json(self) -> str:
        """The report as ``report.json`` text (sorted keys, a final newline)."""
        return json.dumps(self.model_dump(mode="json"), indent=2, sort_keys=True) + "\n"


def validation_line(source: str, error: ValidationError) -> str:
    """One line naming ``source`` and the first offending field."""
    first = error.errors()[0]
    key = ".".join(str(part) for part in first["loc"]) or "(top level)"
    kind = first["type"]
    if key == "schema_version" and kind != "missing":
        return (
            f"{source}: schema_version {first.get('input')!r} is not {SCHEMA_VERSION}: "
            "written by another rcb; rerun this rcb's rcb report on the results folder"
        )
    if kind == "extra_forbidden":
        return f"{source}: unknown field '{key}'"
    if kind == "missing":
        return f"{source}: missing field '{key}'"
    given = first.get("input")
    shown = "" if isinstance(given, dict | list) else f" (got {given!r:.60})"
    return f"{source}: field '{key}': {first['msg']}{shown}"


def report_schema() -> str:
    """The JSON Schema of :class:`Report`, as ``docs/report.schema.json`` holds it."""
    return json.dumps(Report.model_json_schema(), indent=2, sort_keys=True) + "\n"
