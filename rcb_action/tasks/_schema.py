"""The ``task.yaml`` schema. Unknown, missing or ill-typed keys are errors."""

from __future__ import annotations

import datetime as dt
import re
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

_ARXIV_ID = re.compile(r"^\d{4}\.\d{4,5}$")


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


# Licences under which a task may vendor a paper's full text (SPDX ids): they allow
# copying and redistribution. arXiv's default licence does not.
VENDORED_LICENSES = ("CC-BY-4.0", "CC-BY-SA-4.0", "CC0-1.0")


class PaperSource(_Strict):
    """Where the paper text given to the model comes from.

    ``arxiv`` (the default): the LaTeX source of the task's ``arxiv_version`` from
    arXiv's e-print endpoint, flattened and cleaned, cached (rcb_action.papers).
    ``vendored``: a full text the task folder holds (``file``, default
    ``paper.tex``) under a licence from ``VENDORED_LICENSES``. A reproduction task's
    paper comes the same way; its ``experiment.md`` (rcb's specification of the
    experiment at the task's scale) is given beside it and is never the paper.
    ``imported``: the
    paper's text as an imported benchmark ships it (``rcb import rcb``: ResearchCodeBench's
    LaTeX), in a task folder made from the user's checkout, never one of rcb's tasks.
    """

    source: Literal["arxiv", "vendored", "imported"] = "arxiv"
    license: str | None = None
    file: str = Field(default="paper.tex", pattern=r"^[A-Za-z0-9][A-Za-z0-9_.-]*\.(tex|txt)$")

    @property
    def in_task(self) -> bool:
        """The text is a file of the task folder (vendored or imported)."""
        return self.source in ("vendored", "imported")

    @model_validator(mode="after")
    def _licensed(self) -> PaperSource:
        if self.source == "vendored":
            if self.license not in VENDORED_LICENSES:
                raise ValueError(
                    f"a vendored paper needs 'license', one of {', '.join(VENDORED_LICENSES)} "
                    f"(got {self.license!r}); otherwise use {{source: arxiv}}"
                )
        elif self.license is not None:
            raise ValueError("'license' is for {source: vendored} only")
        return self


class SnippetConfig(_Strict):
    """Per-snippet settings: what decides this snippet.

    ``checks``: node ids of the checks (a task with cases and checks); ``tests``:
    node ids of in-process tests (a task graded the old way). One of the two.
    """

    checks: list[str] | None = Field(default=None, min_length=1)
    tests: list[str] | None = Field(default=None, min_length=1)

    @model_validator(mode="after")
    def _one_selection(self) -> SnippetConfig:
        if (self.checks is None) == (self.tests is None):
            raise ValueError("give either 'checks' (cases and checks) or 'tests' (in-process)")
        return self

    @property
    def selection(self) -> list[str]:
        return list(self.checks or self.tests or [])


class AgentVisibility(_Strict):
    """What agent mode may show a model about its answer: these checks (node ids or
    files under the checks folder), run against the reference's outputs of these
    cases only. The other checks and cases stay hidden."""

    checks: list[str] = Field(min_length=1)
    cases: list[str] = Field(min_length=1)


class ReproductionBudget(_Strict):
    """What one agent attempt may spend; the loop stops when any of these runs out."""

    turns: int = Field(default=80, gt=0, le=5000)
    tokens: int = Field(default=2_000_000, gt=0)
    wall_time_s: int = Field(default=3600, gt=0, le=86400)
    cost_usd: float = Field(default=5.0, gt=0)


class ReproductionConfig(_Strict):
    """The ``reproduction:`` block of a reproduction task: what the agent must report,
    the packages its sandbox may install, and its budget.

    ``metrics`` and ``curves`` map each name the agent's ``results.json`` must hold
    to the description the agent is given; the numbers it is graded against live in
    ``expected.yaml``, which the agent never sees.
    """

    runs: int = Field(default=5, ge=1, le=1000)
    # The harness's own runs of the submitted code, each with a seed of its choosing.
    reruns: int = Field(default=2, ge=2, le=20)
    run_timeout_s: int = Field(default=600, gt=0, le=86400)
    packages: list[str] = Field(default_factory=list)
    metrics: dict[str, str] = Field(min_length=1)
    curves: dict[str, str] = Field(default_factory=dict)
    splits: list[str] = Field(default_factory=list)
    reference: str = "reference"
    budget: ReproductionBudget = ReproductionBudget()


class MetricExpectation(_Strict):
    """A published metric: mean and standard deviation over runs."""

    mean: float
    std: float = Field(ge=0)
    higher_is_better: bool
    # False for a number the seed does not move (a closed form): its runs may all agree.
    varies: bool = True
    # With ``source: paper``: where the paper reports it ("Table 2, row ADOPT").
    location: str = ""


class CurveFact(_Strict):
    """A fact about a reported curve (points ``x``, ``y``).

    ``settles_by``: from some x <= ``by`` on, every point lies within ``target`` +- ``tol``.
    ``value_at``: the point at x = ``at`` equals ``target`` within ``tol``.
    ``monotone``: y (or |y| with ``absolute``) moves in ``direction``, allowing
    steps back of at most ``tol``.
    """

    curve: str
    kind: Literal["settles_by", "value_at", "monotone"]
    description: str = ""
    target: float | None = None
    tol: float = Field(default=0.0, ge=0)
    by: float | None = None
    at: float | None = None
    direction: Literal["increasing", "decreasing"] | None = None
    absolute: bool = False

    @model_validator(mode="after")
    def _fields_of_kind(self) -> CurveFact:
        needed = {
            "settles_by": ("target", "by"),
            "value_at": ("target", "at"),
            "monotone": ("direction",),
        }[self.kind]
        for name in needed:
            if getattr(self, name) is None:
                raise ValueError(f"a {self.kind} fact needs '{name}'")
        return self


class ModuleCheck(_Strict):
    """A part of the method whose code must show up in an attempt: any of ``patterns``
    (regular expressions) matching the attempt's code counts as present."""

    name: str = Field(min_length=1)
    patterns: list[str] = Field(min_length=1)

    @field_validator("patterns")
    @classmethod
    def _compiles(cls, value: list[str]) -> list[str]:
        for pattern in value:
            try:
                re.compile(pattern)
            except re.error as exc:
                raise ValueError(f"'{pattern}' is not a regular expression ({exc})") from None
        return value


class ExpectedResults(_Strict):
    """``expected.yaml``: the numbers a reproduction is checked against.

    ``source`` says where they come from: the paper's own tables (``paper``) or
    rcb's gold reproduction of the paper's setup (``gold``), said plainly when the
    paper's numbers cannot be checked.
    """

    source: Literal["paper", "gold"]
    note: str = ""
    metrics: dict[str, MetricExpectation] = Field(min_length=1)
    curves: list[CurveFact] = Field(default_factory=list)
    disjoint_splits: list[tuple[str, str]] = Field(default_factory=list)
    modules: list[ModuleCheck] = Field(default_factory=list)
    # The split the paper holds out, and the metrics fitted without it: one more rerun
    # replaces that split's data files by the task's ``data/<held_out>-swap/`` files, and
    # a fit metric that moves means the held-out data reached the fit.
    held_out: str | None = None
    fit_metrics: list[str] = Field(default_factory=list)

    @model_validator(mode="after")
    def _fit_metrics_are_metrics(self) -> ExpectedResults:
        unknown = [name for name in self.fit_metrics if name not in self.metrics]
        if unknown:
            raise ValueError(f"fit_metrics names no metric: {', '.join(unknown)}")
        if self.fit_metrics and not self.held_out:
            raise ValueError("fit_metrics needs 'held_out', the split they must not depend on")
        return self


class RubricItem(_Strict):
    """One weighted criterion the judge grades."""

    id: str = Field(pattern=r"^[A-Za-z0-9][A-Za-z0-9_.-]*$")
    dimension: Literal["method_accuracy", "experiment_design"]
    weight: float = Field(gt=0)
    criterion: str = Field(min_length=1)


class Rubric(_Strict):
    """``rubric.yaml``: weighted items for method understanding and experiment design.

    A judged dimension passes when its weighted score reaches ``pass_threshold``.
    """

    pass_threshold: float = Field(default=0.6, gt=0, le=1)
    items: list[RubricItem] = Field(min_length=1)

    @model_validator(mode="after")
    def _ids_and_dimensions(self) -> Rubric:
        ids = [item.id for item in self.items]
        duplicate = next((i for i in ids if ids.count(i) > 1), None)
        if duplicate:
            raise ValueError(f"item id '{duplicate}' is used twice")
        for dimension in ("method_accuracy", "experiment_design"):
            if not any(item.dimension == dimension for item in self.items):
                raise ValueError(f"no item grades {dimension}")
        return self


class TaskConfig(_Strict):
    """One task's ``task.yaml``."""

    id: str = Field(pattern=r"^[a-z0-9][a-z0-9_-]*$")
    title: str = Field(min_length=1)
    arxiv: str | None = None
    # The arXiv version whose LaTeX source is the prompt's paper (versions never change).
    arxiv_version: int | None = Field(default=None, ge=1, le=99)
    paper_url: str | None = Field(default=None, pattern=r"^https://\S+$")
    published: dt.date
    code_first_commit: dt.date | None = None
    code_url: str | None = None
    # The authors' code a task is built from: the commit, and its licence (SPDX id).
    code_commit: str | None = Field(default=None, pattern=r"^[0-9a-f]{40}$")
    code_license: (
        Literal["MIT", "Apache-2.0", "BSD-2-Clause", "BSD-3-Clause", "0BSD", "ISC"] | None
    ) = None
    domain: str = Field(pattern=r"^[a-z][a-z0-9_-]*$")
    kind: Literal["snippet", "reproduction"] = "snippet"
    env: str = Field(pattern=r"^[A-Za-z0-9][A-Za-z0-9_.-]*$")
    gpu: Literal["none", "optional", "required"] = "none"
    timeout_s: int = Field(default=60, gt=0, le=3600)
    annotated: list[str] = Field(default_factory=list)
    context: list[str] = Field(default_factory=list)
    paper: PaperSource = PaperSource()
    snippets: dict[str, SnippetConfig] = Field(default_factory=dict)
    # In-process tests (the old format); a task with a checks folder uses cases and checks.
    tests_dir: str = "tests"
    cases_dir: str = "cases"
    checks_dir: str = "checks"
    agent: AgentVisibility | None = None
    reproduction: ReproductionConfig | None = None

    @model_validator(mode="before")
    @classmethod
    def _no_local_paper(cls, data: object) -> object:
        """``paper: {source: local}`` (paper.md as the paper) is gone: say what replaced it."""
        paper = data.get("paper") if isinstance(data, dict) else None
        if isinstance(paper, dict) and paper.get("source") == "local":
            raise ValueError(
                "'paper: {source: local}' is gone: the paper is the arXiv LaTeX ({source: arxiv} "
                "with 'arxiv_version') or a vendored full text, and a reproduction task's "
                "paper.md is now experiment.md (the experiment's specification)"
            )
        return data

    @field_validator("arxiv")
    @classmethod
    def _arxiv_id(cls, value: str | None) -> str | None:
        if value is not None and not _ARXIV_ID.match(value):
            raise ValueError(f"'{value}' is not a new-style arXiv id like 2503.10622 (quote it)")
        return value

    @model_validator(mode="after")
    def _a_paper_to_cite(self) -> TaskConfig:
        if self.arxiv is None and self.paper_url is None:
            raise ValueError(
                "missing required key 'arxiv' (or 'paper_url' for a paper that is not on arXiv)"
            )
        if self.paper.source == "arxiv" and (self.arxiv is None or self.arxiv_version is None):
            raise ValueError(
                "'paper: {source: arxiv}' (the default) needs 'arxiv' and 'arxiv_version' (the "
                "version whose LaTeX is the paper), or give 'paper: {source: vendored, license: ...}'"
            )
        return self

    @property
    def citation(self) -> str:
        """How prompts cite the paper: ``arXiv 2503.10622v1`` (the pinned version), else its URL."""
        if self.arxiv and self.arxiv_version:
            return f"arXiv {self.arxiv}v{self.arxiv_version}"
        return f"arXiv {self.arxiv}" if self.arxiv else str(self.paper_url)

    @property
    def link(self) -> str:
        """The paper's page: its arXiv abstract, else ``paper_url``."""
        return f"https://arxiv.org/abs/{self.arxiv}" if self.arxiv else str(self.paper_url)
