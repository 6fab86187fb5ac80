"""A pull request's scores against the base branch's: per model, and the tasks that moved."""

from __future__ import annotations

from dataclasses import dataclass, field

from rcb_action.report import ModelEntry, Report, TaskScore, markdown_text
from rcb_action.scoring import Outcome, paired_bootstrap


@dataclass(frozen=True)
class TaskChange:
    """One task whose scaled pass@1 differs (None: the task is new, or gone)."""

    task: str
    current: float | None
    base: float | None


@dataclass(frozen=True)
class ModelChange:
    """One model's headline score now and on the base branch."""

    model: str
    current: float | None
    base: float | None
    tasks: list[TaskChange] = field(default_factory=list)
    # The change on the snippets both runs scored, with its paired 95% bootstrap
    # interval (difference, ci95_low, ci95_high, snippets); None when a report has
    # no per-snippet outcomes.
    paired: dict[str, float] | None = None

    @property
    def delta(self) -> float | None:
        if self.current is None or self.base is None:
            return None
        return round(self.current - self.base, 2)


@dataclass(frozen=True)
class Comparison:
    """Every model of the current report, with its base-branch score where one exists.

    When both reports name their tasks' hashes, scores are compared only on the tasks
    that are identical in both; ``changed_tasks`` are the others (new, removed or
    edited), a change of the benchmark and never counted as a model's."""

    source: str
    models: list[ModelChange]
    changed_tasks: list[str] = field(default_factory=list)
    common_tasks: int | None = None

    def for_model(self, name: str) -> ModelChange | None:
        return next((m for m in self.models if m.model == name), None)


def _score(entry: ModelEntry | TaskScore | None) -> float | None:
    return None if entry is None else entry.scaled_pass_at_1


def _score_on(entry: ModelEntry | None, tasks: set[str]) -> float | None:
    """A model's scaled pass@1 on ``tasks`` only: its tasks' scores weighted by their lines."""
    if entry is None:
        return None
    scored = [
        (t.weight, t.scaled_pass_at_1)
        for name, t in entry.tasks.items()
        if name in tasks and t.weight and t.scaled_pass_at_1 is not None
    ]
    total = sum(w for w, _ in scored)
    return round(sum(w * v for w, v in scored) / total, 2) if total else None


def _outcomes(entry: ModelEntry | None, tasks: set[str] | None) -> list[Outcome] | None:
    if entry is None:
        return None
    return [
        Outcome(task, snippet, sample, weight, bool(passed))
        for task, snippet, sample, weight, passed in entry.outcomes
        if tasks is None or task in tasks
    ]


def compare_reports(current: Report, base: Report, *, source: str = "") -> Comparison:
    """Compare two reports (``rcb report --json``) model by model and task by task.

    Models only in ``base`` are left out: the comparison is about this run. When both
    reports carry ``task_shas``, a task whose hash differs (or that only one has) is a
    change of the benchmark: it is listed in ``changed_tasks`` and left out of every
    score compared, which is recomputed on the identical tasks.
    """
    now_shas, then_shas = current.task_shas, base.task_shas
    same = {t for t, sha in now_shas.items() if then_shas.get(t) == sha and sha != "mixed"}
    changed = sorted((set(now_shas) | set(then_shas)) - same)
    changes = []
    for name, entry in sorted(current.models.items()):
        before = base.models.get(name)
        tasks = []
        if before is not None:
            now_tasks, then_tasks = entry.tasks, before.tasks
            for task in sorted(set(now_tasks) | set(then_tasks)):
                if task not in same:
                    continue
                a, b = _score(now_tasks.get(task)), _score(then_tasks.get(task))
                if a != b:
                    tasks.append(TaskChange(task, a, b))
        now, then = _outcomes(entry, same), _outcomes(before, same)
        paired = paired_bootstrap(now, then) if now and then else None
        if not changed:
            changes.append(ModelChange(name, _score(entry), _score(before), tasks, paired))
        else:
            changes.append(
                ModelChange(name, _score_on(entry, same), _score_on(before, same), tasks, paired)
            )
    return Comparison(
        source=source,
        models=changes,
        changed_tasks=changed,
        common_tasks=len(same),
    )


def regressions(comparison: Comparison, points: float) -> list[str]:
    """One line per model whose change from the base lies below ``-points`` with 95%
    confidence: the upper end of its paired interval is under ``-points``."""
    found = []
    for change in comparison.models:
        paired = change.paired
        if paired is not None and paired["ci95_high"] < -points:
            found.append(
                f"{change.model}: {paired['difference']:+.1f} points on {int(paired['snippets'])} "
                f"snippets (95% interval {paired['ci95_low']:+.1f} to {paired['ci95_high']:+.1f}), "
                f"below -{points:g}"
            )
    return found


def format_delta(delta: float | None) -> str:
    """``+2.5``, ``-1.0``, ``±0.0`` or ``-`` when there is nothing to compare."""
    if delta is None:
        return "-"
    if abs(delta) < 0.05:
        return "±0.0"
    return f"{delta:+.1f}"


def _pct(value: float | None) -> str:
    return "-" if value is None else f"{value:.1f}"


def render_comparison(comparison: Comparison, *, max_tasks: int = 20) -> str:
    """What the headline table's change column leaves out: where the base came from,
    models the base did not have, and the tasks that moved. Names are escaped
    (:func:`rcb_action.report.markdown_text`)."""
    md = markdown_text
    source = f" ({md(comparison.source)})" if comparison.source else ""
    lines = [f"**Compared with the base branch**{source}.", ""]
    if comparison.changed_tasks:
        shown = ", ".join(map(md, comparison.changed_tasks[:max_tasks]))
        more = len(comparison.changed_tasks) - max_tasks
        lines += [
            f"The benchmark changed: {len(comparison.changed_tasks)} task(s) are new, removed "
            f"or edited ({shown}{f', … and {more} more' if more > 0 else ''}). Scores are "
            f"compared on the {comparison.common_tasks} task(s) identical in both runs.",
            "",
        ]
    new = [c.model for c in comparison.models if c.base is None]
    if new:
        lines += [f"Not on the base branch: {', '.join(map(md, new))}.", ""]
    paired = [c for c in comparison.models if c.paired is not None]
    if paired:
        lines += ["Change on the snippets both runs scored (paired 95% interval):", ""]
        lines += [
            f"- {md(c.model)}: {format_delta(c.paired['difference'])} "
            f"({c.paired['ci95_low']:+.1f} to {c.paired['ci95_high']:+.1f}, "
            f"{int(c.paired['snippets'])} snippets)"
            for c in paired
            if c.paired is not None
        ]
        lines.append("")
    moved = [(c.model, t) for c in comparison.models for t in c.tasks]
    if not moved:
        lines.append("No task's score moved.")
    else:
        lines += ["Tasks that moved (scaled pass@1):", ""]
        for model, task in moved[:max_tasks]:
            if task.base is None:
                what = f"new, {_pct(task.current)}"
            elif task.current is None:
                what = f"not in this run (was {_pct(task.base)})"
            else:
                what = f"{_pct(task.base)} → {_pct(task.current)}"
            lines.append(f"- {md(model)} / {md(task.task)}: {what}")
        if len(moved) > max_tasks:
            lines.append(f"- … and {len(moved) - max_tasks} more")
    return "\n".join(lines) + "\n"
