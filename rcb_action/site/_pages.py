"""Everything the pages show, computed once from records, tasks and the registry."""

from __future__ import annotations

import datetime as dt
from collections import Counter, defaultdict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from rcb_action.models import Registry
from rcb_action.report import (
    FORGEABLE_LABEL,
    IN_PROCESS,
    forgeable_snippets,
    outcomes_of,
    summarize,
    task_grading,
)
from rcb_action.reproduce import ReproductionRecord
from rcb_action.results import Record
from rcb_action.scoring import (
    FAILURE_CLASSES,
    Outcome,
    macro_task_mean,
    paired_bootstrap,
    pass_at_k,
    pass_rate,
    scaled_pass_at_1,
)
from rcb_action.site._charts import Segment, stacked
from rcb_action.site._paths import model_slug, task_slug
from rcb_action.site._reproduction import ReproductionView, reproduction_view
from rcb_action.site._select import by_model, headline, scored_only, with_paper, without_paper
from rcb_action.site._window import (
    WindowResult,
    encode_window,
    pick_default_window,
    rank_window,
    score_key,
)
from rcb_action.tasks import Task


@dataclass
class SnippetView:
    name: str
    weight: int
    passed: int = 0
    scored: int = 0

    @property
    def pass_share(self) -> float | None:
        return 100.0 * self.passed / self.scored if self.scored else None


@dataclass
class TaskView:
    """A paper: its metadata (from ``tasks/`` when present there, else from records)."""

    id: str
    slug: str
    title: str
    arxiv: str | None
    code_url: str | None
    published: dt.date | None
    domain: str
    kind: str
    snippets: list[SnippetView]
    in_tasks_dir: bool
    rows: list[TaskRow] = field(default_factory=list)
    paper_url: str | None = None
    grading: str | None = None  # "cases" or "in-process"; None: no scored attempt yet

    @property
    def forgeable(self) -> bool:
        """Its verdicts came from tests that ran in the model's own process."""
        return self.grading == IN_PROCESS

    @property
    def grading_label(self) -> str | None:
        if self.grading is None:
            return None
        return FORGEABLE_LABEL if self.forgeable else "cases and checks"

    @property
    def total_weight(self) -> int:
        return sum(s.weight for s in self.snippets)

    @property
    def best(self) -> float | None:
        scores = [r.scaled for r in self.rows if r.scaled is not None]
        return max(scores) if scores else None


@dataclass(frozen=True)
class Cell:
    """One model's attempts on one snippet: passes out of scored samples."""

    passed: int
    scored: int

    @property
    def css(self) -> str:
        if not self.scored:
            return "na"
        if self.passed == self.scored:
            return "ok"
        return "part" if self.passed else "no"


@dataclass
class TaskRow:
    model: ModelView
    scaled: float | None
    pass_rate: float | None
    cells: list[Cell]


@dataclass(frozen=True)
class ModelTask:
    task: TaskView
    scaled: float | None
    pass_rate: float | None
    snippets: int
    after_cutoff: bool | None


@dataclass(frozen=True)
class DomainScore:
    domain: str
    scaled: float | None
    snippets: int


@dataclass
class ModelView:
    """A model's line on the leaderboard and its own page."""

    id: str
    slug: str
    name: str
    provider: str
    cutoff: dt.date | None  # the checked cutoff, else the one the submitter declared
    cutoff_source: str | None
    paper: bool
    scaled: float | None
    pass_rate: float | None
    ci: tuple[float, float] | None
    snippets: int
    samples: int
    macro: float | None
    pass_at_k: dict[int, float | None]
    cost: float
    tokens_in: int
    tokens_out: int
    harness_errors: int
    skipped: int
    failure_classes: dict[str, int]
    failure_segments: list[Segment]
    post_cutoff: float | None
    post_cutoff_snippets: int
    cutoff_declared: bool = False  # ``cutoff`` is the submitter's word, not checked
    forgeable_snippets: int = 0
    rank: int | None = None
    tasks: list[ModelTask] = field(default_factory=list)
    domains: list[DomainScore] = field(default_factory=list)

    @property
    def failures(self) -> int:
        return sum(self.failure_classes.values())


@dataclass(frozen=True)
class AblationRow:
    model: ModelView
    with_paper: dict[str, Any]
    without_paper: dict[str, Any]
    paired: dict[str, float] | None


@dataclass
class SiteData:
    """Everything the templates need."""

    models: list[ModelView]
    tasks: list[TaskView]
    domains: list[str]
    failure_classes: list[str]
    ablation: list[AblationRow]
    reproduction: ReproductionView | None
    window: dict[str, Any]
    window_default: WindowResult | None
    records: int
    snippets: int

    @property
    def forgeable_tasks(self) -> list[TaskView]:
        """Papers whose verdicts came from in-process tests (forgeable), by id."""
        return sorted((t for t in self.tasks if t.forgeable), key=lambda t: t.id)


def _failure_order(records: Sequence[Record]) -> list[str]:
    seen = {r.failure_class or "unknown" for r in records if r.status == "fail"}
    known = [c for c in FAILURE_CLASSES if c in seen]
    return known + sorted(seen - set(known))


def _model_view(
    model: str,
    chosen: list[Record],
    scored: list[Record],
    outcomes: list[Outcome],
    slug: str,
    registry: Registry,
    classes: list[str],
) -> ModelView:
    """``chosen``: the model's headline attempts, every status; ``scored``: those that
    count, and ``outcomes`` theirs, in the same order."""
    info = registry.get(model)
    summary = summarize(chosen)
    declared = registry.declared_cutoff(model)
    # A declared cutoff gives the model's own post-cutoff score, labelled as declared; the
    # contamination window never ranks on it (see rcb_action.site._window).
    cutoff = registry.cutoff(model) or declared
    later = [o for o, r in zip(outcomes, scored, strict=True) if cutoff and r.published > cutoff]
    failures = Counter(r.failure_class or "unknown" for r in chosen if r.status == "fail")
    samples = summary["samples"]
    return ModelView(
        id=model,
        slug=slug,
        name=info.display_name if info else model,
        provider=info.provider if info else (model.split("/")[0] if "/" in model else "—"),
        cutoff=cutoff,
        cutoff_source=info.cutoff_source if info else None,
        paper=bool(chosen) and chosen[0].with_paper,
        scaled=summary["scaled_pass_at_1"],
        pass_rate=summary["pass_rate"],
        ci=tuple(summary["ci95"]) if summary["ci95"] else None,
        snippets=summary["snippets"],
        samples=samples,
        macro=macro_task_mean(outcomes),
        pass_at_k={
            k: pass_at_k(outcomes, k) for k in sorted({1, 5, 10, samples}) if 0 < k <= samples
        },
        cost=sum(r.cost_usd for r in chosen),
        tokens_in=sum(r.tokens_in for r in chosen),
        tokens_out=sum(r.tokens_out for r in chosen),
        harness_errors=sum(r.status == "harness_error" for r in chosen),
        skipped=sum(r.status == "skipped" for r in chosen),
        failure_classes={c: failures[c] for c in classes if failures[c]},
        failure_segments=stacked(failures, classes),
        post_cutoff=scaled_pass_at_1(later) if cutoff else None,
        post_cutoff_snippets=len({(o.task, o.snippet) for o in later}),
        cutoff_declared=declared is not None,
        forgeable_snippets=forgeable_snippets(chosen),
    )


def _task_view(task_id: str, task: Task | None, recs: list[Record]) -> TaskView:
    slug = task_slug(task_id)
    grading = task_grading(recs).get(task_id)
    first = recs[0] if recs else None
    weights: dict[str, int] = {}
    for r in recs:
        weights.setdefault(r.snippet, r.weight)
    if task is not None:
        names = task.snippet_names()
        names += sorted(set(weights) - set(names))
        snippets = [
            SnippetView(n, task.weight(n) if n in task.snippets else weights[n]) for n in names
        ]
        c = task.config
        return TaskView(
            task_id, slug, c.title, c.arxiv, c.code_url, c.published, c.domain, c.kind,
            snippets, in_tasks_dir=True, paper_url=c.paper_url, grading=grading,
        )  # fmt: skip
    return TaskView(
        id=task_id,
        slug=slug,
        title=task_id,
        arxiv=None,
        code_url=None,
        published=first.published if first else None,
        domain=first.domain if first else "",
        kind="snippet",
        snippets=[SnippetView(n, w) for n, w in sorted(weights.items())],
        in_tasks_dir=False,
        grading=grading,
    )


def _rank(models: Sequence[ModelView]) -> list[ModelView]:
    """Best first; equal scores (to 1e-6) share a rank; models with no score come last."""
    ordered = sorted(models, key=lambda v: (v.scaled is None, -score_key(v.scaled or 0.0), v.id))
    keys = [score_key(v.scaled) for v in ordered if v.scaled is not None]
    for view in ordered:
        if view.scaled is not None:
            mine = score_key(view.scaled)
            view.rank = 1 + sum(k > mine for k in keys)
    return ordered


_Scores = dict[tuple[str, str], tuple[float | None, float | None, int]]


def _task_rows(
    task: TaskView,
    attempts: dict[tuple[str, str], list[Outcome]],
    scores: _Scores,
    models: dict[str, ModelView],
) -> list[TaskRow]:
    """Every model's result on each snippet of ``task``; tallies the snippets' passes too."""
    position = {s.name: i for i, s in enumerate(task.snippets)}
    rows = []
    for model_id, view in models.items():
        outcomes = attempts.get((task.id, model_id))
        if not outcomes:
            continue
        tally = [[0, 0] for _ in task.snippets]
        for o in outcomes:
            tally[position[o.snippet]][0] += o.passed
            tally[position[o.snippet]][1] += 1
        for snippet, (passed, scored) in zip(task.snippets, tally, strict=True):
            snippet.passed += passed
            snippet.scored += scored
        scaled, rate, _ = scores[(task.id, model_id)]
        rows.append(TaskRow(view, scaled, rate, [Cell(p, n) for p, n in tally]))
    rows.sort(key=lambda row: (row.scaled is None, -score_key(row.scaled or 0.0), row.model.id))
    return rows


def _model_tasks(view: ModelView, tasks: dict[str, TaskView], scores: _Scores) -> list[ModelTask]:
    out = []
    for task_id, task in tasks.items():
        if (task_id, view.id) not in scores:
            continue
        scaled, rate, count = scores[(task_id, view.id)]
        after = None
        if view.cutoff is not None and task.published is not None:
            after = task.published > view.cutoff
        out.append(ModelTask(task, scaled, rate, count, after))
    out.sort(key=lambda t: (t.scaled is None, -score_key(t.scaled or 0.0), t.task.id))
    return out


def _domains(scored: Sequence[Record], outcomes: Sequence[Outcome]) -> list[DomainScore]:
    per_domain: dict[str, list[Outcome]] = defaultdict(list)
    for r, o in zip(scored, outcomes, strict=True):
        per_domain[r.domain].append(o)
    out = []
    for domain, group in sorted(per_domain.items()):
        count = len({(o.task, o.snippet) for o in group})
        out.append(DomainScore(domain, scaled_pass_at_1(group), count))
    return out


def build_site_data(
    records: Sequence[Record],
    tasks: Sequence[Task],
    registry: Registry,
    reproduction: Sequence[ReproductionRecord] = (),
    gold: Mapping[str, Mapping[str, Any]] | None = None,
) -> SiteData:
    """Scores, tables and chart geometry for every page, in a deterministic order."""
    grouped = by_model(records)
    heads = {m: headline(recs) for m, recs in grouped.items()}
    scored = scored_only(heads)
    outcomes = {m: outcomes_of(recs) for m, recs in scored.items()}  # in the same order
    headline_records = [r for recs in heads.values() for r in recs]
    classes = _failure_order(headline_records)
    models = {
        m: _model_view(m, heads[m], scored[m], outcomes[m], model_slug(m), registry, classes)
        for m in grouped
    }
    ordered = _rank(list(models.values()))

    # Tasks: every task folder, and any task that only the results know.
    loaded = {t.id: t for t in tasks}
    by_task: dict[str, list[Record]] = defaultdict(list)
    for r in headline_records:
        by_task[r.task].append(r)
    task_ids = sorted(set(loaded) | set(by_task))
    task_views = {t: _task_view(t, loaded.get(t), by_task.get(t, [])) for t in task_ids}

    # Per model and task: the scores both the task pages and the model pages show.
    attempts: dict[tuple[str, str], list[Outcome]] = defaultdict(list)
    for model_id, group in outcomes.items():
        for o in group:
            attempts[(o.task, model_id)].append(o)
    scores: _Scores = {}
    for key, group in attempts.items():
        count = len({o.snippet for o in group})
        scores[key] = (scaled_pass_at_1(group), pass_rate(group), count)
    for task in task_views.values():
        task.rows = _task_rows(task, attempts, scores, models)
    for model_id, recs in scored.items():
        models[model_id].tasks = _model_tasks(models[model_id], task_views, scores)
        models[model_id].domains = _domains(recs, outcomes[model_id])

    ablation = []
    for model_id, recs in grouped.items():
        with_recs, without_recs = with_paper(recs), without_paper(recs)
        if with_recs and without_recs:
            paired = paired_bootstrap(outcomes_of(with_recs), outcomes_of(without_recs))
            ablation.append(
                AblationRow(models[model_id], summarize(with_recs), summarize(without_recs), paired)
            )
    place = {v.id: i for i, v in enumerate(ordered)}
    ablation.sort(key=lambda a: place[a.model.id])

    meta = {
        m.id: {"name": m.name, "provider": m.provider, "href": f"models/{m.slug}.html"}
        for m in ordered
    }
    window = pick_default_window(scored, registry)
    newest_first = sorted(
        task_views.values(),
        key=lambda t: (t.published is None, -(t.published.toordinal() if t.published else 0), t.id),
    )
    return SiteData(
        models=ordered,
        tasks=newest_first,
        domains=sorted({r.domain for recs in scored.values() for r in recs}),
        failure_classes=classes,
        ablation=ablation,
        reproduction=reproduction_view(reproduction, gold or {}, registry),
        window=encode_window(scored, registry, meta),
        window_default=rank_window(scored, registry, *window) if window else None,
        records=len(records),
        snippets=len({(r.task, r.snippet) for recs in scored.values() for r in recs}),
    )
