"""Render a report as terminal tables or Markdown (job summaries, PR comments).

Row builders take ``text``: how a string that came from outside (a model name, a task
id, a message) is written for the output at hand (:func:`markdown_text` for Markdown;
the terminal wraps every cell in :func:`terminal_text`).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from typing import Any

from rich.console import Console
from rich.table import Table

from rcb_action.models import DECLARED_NOTE
from rcb_action.report._build import FORGEABLE_LABEL, IN_PROCESS
from rcb_action.report._escape import markdown_text, terminal_text
from rcb_action.report._schema import (
    CommonPostCutoff,
    FunnelStep,
    ModelEntry,
    Report,
    ReproductionSection,
    Summary,
)

Escape = Callable[[str], str]


def _raw(text: str) -> str:
    return text


def _pct(value: float | None) -> str:
    return "-" if value is None else f"{value:.1f}"


def _ci(entry: Summary) -> str:
    ci = entry.ci95
    return "-" if not ci else f"[{ci[0]:.1f}, {ci[1]:.1f}]"


def _ranked(report: Report) -> list[tuple[str, ModelEntry]]:
    return sorted(report.models.items(), key=lambda kv: (-(kv[1].scaled_pass_at_1 or -1), kv[0]))


def _post(entry: ModelEntry) -> str:
    post = entry.post_cutoff
    if post.cutoff is None:
        return "n/a (no cutoff)"
    declared = f", cutoff {DECLARED_NOTE}" if post.declared else ""
    return f"{_pct(post.scaled_pass_at_1)} ({post.snippets} snippets after {post.cutoff}{declared})"


def _forgeable(entry: ModelEntry) -> str:
    """Snippets graded by in-process tests, of those scored."""
    return f"{entry.forgeable_snippets} of {entry.snippets}"


def overall_rows(report: Report, text: Escape = _raw) -> list[list[str]]:
    rows = []
    for rank, (name, entry) in enumerate(_ranked(report), 1):
        rows.append(
            [
                str(rank),
                text(name),
                f"{_pct(entry.scaled_pass_at_1)} {_ci(entry)}",
                _pct(entry.pass_rate),
                str(entry.snippets),
                _forgeable(entry),
                _post(entry),
                f"${entry.cost_usd:.2f}",
                str(entry.harness_errors),
            ]
        )
    return rows


def task_gradings(report: Report) -> dict[str, str]:
    """Each task's grading over every model: ``in-process`` when any model's verdicts
    on it were, else ``cases``."""
    out: dict[str, str] = {}
    for entry in report.models.values():
        for task, score in entry.tasks.items():
            if out.get(task) != IN_PROCESS:
                out[task] = score.grading
    return out


def grading_label(grading: str) -> str:
    """What a task's grading is called in every output."""
    return FORGEABLE_LABEL if grading == IN_PROCESS else "cases and checks"


def grading_note(report: Report, text: Escape = _raw) -> str | None:
    """One sentence on the tasks graded by in-process tests; None when there are none."""
    gradings = task_gradings(report)
    forgeable = sorted(t for t, g in gradings.items() if g == IN_PROCESS)
    if not forgeable:
        return None
    shown = ", ".join(text(t) for t in forgeable[:12])
    more = f" and {len(forgeable) - 12} more" if len(forgeable) > 12 else ""
    return (
        f"{FORGEABLE_LABEL.capitalize()}: {len(forgeable)} of {len(gradings)} task(s) "
        f"({shown}{more}) were graded by tests that ran in the same process as the model's "
        "code, so a pass there can be forged; tasks graded by cases and checks cannot be."
    )


OVERALL_HEADER = [
    "#",
    "Model",
    "Scaled pass@1 [95% CI]",
    "Pass rate",
    "Snippets",
    "In-process (forgeable)",
    "Post-cutoff",
    "Cost",
    "Harness errors",
]


AGENT_HEADER = [
    "Model",
    "K",
    "Attempts",
    "Scaled pass@1",
    "Scaled pass after K",
    "Pass rate @1",
    "Pass rate after K",
    "Fixed",
    "Broken",
    "Mean turns",
]


def agent_rows(report: Report, text: Escape = _raw) -> list[list[str]]:
    """Agent mode (``--agent-turns K``): pass@1 against pass-after-K, per model and K."""
    rows = []
    for name, entry in _ranked(report):
        for k, mode in entry.agent_mode.items():
            rows.append(
                [
                    text(name),
                    k,
                    str(mode.attempts),
                    _pct(mode.scaled_pass_at_1),
                    _pct(mode.scaled_pass_after_k),
                    _pct(mode.pass_rate_at_1),
                    _pct(mode.pass_rate_after_k),
                    str(mode.fixed),
                    str(mode.broken),
                    "-" if mode.mean_turns_used is None else f"{mode.mean_turns_used:.2f}",
                ]
            )
    return rows


def _table(title: str, header: list[str], rows: list[list[str]], *, left: int = 1) -> Table:
    """A rich table whose every cell and column heading is plain text (never markup)."""
    table = Table(title=title)
    for i, column in enumerate(header):
        table.add_column(terminal_text(column), justify="left" if i < left else "right")
    for row in rows:
        table.add_row(*map(terminal_text, row))
    return table


def _say(console: Console, line: str) -> None:
    console.print(terminal_text(line))


def print_report(report: Report, console: Console | None = None) -> None:
    """The overall table, per-task scores, failure classes and ablations.

    Every name is printed as plain text: rich markup (``[red]``, ``[link=...]``) in it
    is shown, not applied, and terminal escape sequences are removed.
    """
    console = console or Console(width=None if Console().is_terminal else 140)
    table = Table(title="rcb snippet track: scaled pass@1 (line-weighted, %)")
    for header in OVERALL_HEADER:
        table.add_column(header, justify="left" if header == "Model" else "right")
    for row in overall_rows(report):
        table.add_row(*map(terminal_text, row))
    console.print(table)
    note = grading_note(report)
    if note:
        _say(console, note)

    models = [name for name, _ in _ranked(report)]
    tasks = sorted({t for e in report.models.values() for t in e.tasks})
    if tasks:
        gradings = task_gradings(report)
        rows = []
        for task in tasks:
            cells = [task, grading_label(gradings[task])]
            for name in models:
                score = report.models[name].tasks.get(task)
                cells.append(
                    "-"
                    if not score
                    else f"{_pct(score.scaled_pass_at_1)} / {_pct(score.pass_rate)}"
                )
            rows.append(cells)
        per_task = _table(
            "Per task: scaled pass@1 / pass rate", ["Task", "Grading", *models], rows, left=2
        )
        per_task.add_row(
            "macro mean",
            "",
            *[_pct(report.models[n].macro_task_mean) for n in models],
            style="bold",
        )
        console.print(per_task)

    classes = sorted({c for e in report.models.values() for c in e.failure_classes})
    if classes:
        rows = [
            [n, *[str(report.models[n].failure_classes.get(c, 0)) for c in classes]] for n in models
        ]
        console.print(_table("Failure classes (attempts)", ["Model", *classes], rows))

    for name in models:
        entry = report.models[name]
        if entry.skipped:
            _say(
                console,
                f"{name}: {entry.skipped} attempt(s) not run: {'; '.join(entry.skip_reasons)}",
            )
        if entry.no_paper is not None:
            _say(
                console,
                f"Ablation {name}: with paper {_pct(entry.scaled_pass_at_1)}, "
                f"without {_pct(entry.no_paper.scaled_pass_at_1)}",
            )
        if entry.notes is not None:
            _say(
                console,
                f"Notes instead of the paper, {name} (not a headline): "
                f"{_pct(entry.notes.scaled_pass_at_1)} over {entry.notes.snippets} snippets",
            )
        cache = entry.prompt_cache
        if cache.tokens_in:
            _say(
                console,
                f"Prompt cache {name}: {cache.tokens_cached} of {cache.tokens_in} input "
                f"tokens served from the provider's cache, saving ${cache.cost_saved_usd:.4f}",
            )
    refined = agent_rows(report)
    if refined:
        console.print(
            _table(
                "Agent mode: pass@1 against pass after K rewrites (hidden tests decide)",
                AGENT_HEADER,
                refined,
            )
        )
    common = report.common_post_cutoff
    if common:
        _say(console, _common_line(common, _raw))
    for comparison in report.comparisons:
        _say(
            console,
            f"{comparison.a} - {comparison.b}: {comparison.difference:+.1f} points "
            f"(paired 95% CI [{comparison.ci95_low:.1f}, {comparison.ci95_high:.1f}], "
            f"{comparison.snippets} snippets)",
        )


def _common_line(common: CommonPostCutoff, text: Escape) -> str:
    """The scores on the papers after every model's (checked) cutoff."""
    parts = [
        f"{text(n)} {_pct(s.scaled_pass_at_1)} ({s.snippets} snippets)"
        for n, s in sorted(common.models.items())
    ]
    line = f"Post-cutoff for every model (papers after {common.after}): " + "; ".join(parts)
    declared = common.models_with_declared_cutoff
    if declared:
        names = ", ".join(text(n) for n in declared)
        line += f". Cutoff {DECLARED_NOTE}, so not used for this date: {names}"
    return line


def _md_table(header: list[str], rows: list[list[str]]) -> str:
    """A Markdown table; a ``|`` not yet escaped in a cell is (text from outside is
    escaped by the caller with :func:`markdown_text`)."""

    def cell(value: str) -> str:
        return re.sub(r"(?<!\\)\|", r"\\|", value)

    lines = ["| " + " | ".join(map(cell, header)) + " |"]
    lines.append("|" + "|".join(" --- " for _ in header) + "|")
    lines += ["| " + " | ".join(map(cell, row)) + " |" for row in rows]
    return "\n".join(lines)


def paper_condition_rows(report: Report, text: Escape = _raw) -> list[list[str]]:
    """Per model that ran another condition than the paper: its scaled pass@1 with the
    paper, without it, and with the task's notes instead (``-`` when not run)."""
    rows = []
    for name, entry in report.models.items():
        if entry.no_paper is None and entry.notes is None:
            continue
        with_paper = _pct(entry.scaled_pass_at_1) if entry.paper else "-"
        without: Summary | None = entry.no_paper or (None if entry.paper else entry)
        rows.append(
            [
                text(name),
                with_paper,
                _pct(without.scaled_pass_at_1 if without else None),
                _pct(entry.notes.scaled_pass_at_1 if entry.notes else None),
            ]
        )
    return rows


def prompt_cache_rows(report: Report, text: Escape = _raw) -> list[list[str]]:
    """Per model whose provider served prompt tokens from its cache: what that saved."""
    rows = []
    for name, entry in report.models.items():
        cache = entry.prompt_cache
        if cache.tokens_cached:
            rows.append(
                [
                    text(name),
                    str(cache.tokens_in),
                    str(cache.tokens_cached),
                    f"{cache.cost_saved_usd:.4f}",
                ]
            )
    return rows


def render_markdown(report: Report) -> str:
    """The report as GitHub-flavoured Markdown (with the reproduction track's when present).

    Model names, task ids and messages are escaped (:func:`markdown_text`): whatever
    they hold shows as text and stays in its table cell.
    """
    reproduction = report.reproduction
    if reproduction is not None and not report.models:
        return render_reproduction_markdown(reproduction)
    md = markdown_text
    parts = ["## rcb snippet track", "", _md_table(OVERALL_HEADER, overall_rows(report, md)), ""]
    note = grading_note(report, md)
    if note:
        parts += [f"**{note}**", ""]
    models = [name for name, _ in _ranked(report)]
    tasks = sorted({t for e in report.models.values() for t in e.tasks})
    if tasks:
        gradings = task_gradings(report)
        rows = []
        for task in tasks:
            row = [md(task), grading_label(gradings[task])]
            for name in models:
                score = report.models[name].tasks.get(task)
                row.append("-" if not score else _pct(score.scaled_pass_at_1))
            rows.append(row)
        rows.append(
            ["**macro mean**", "", *[_pct(report.models[n].macro_task_mean) for n in models]]
        )
        header = ["Task", "Grading", *map(md, models)]
        parts += ["### Per task (scaled pass@1)", "", _md_table(header, rows), ""]
    classes = sorted({c for e in report.models.values() for c in e.failure_classes})
    if classes:
        rows = [
            [md(n), *[str(report.models[n].failure_classes.get(c, 0)) for c in classes]]
            for n in models
        ]
        parts += ["### Failure classes", "", _md_table(["Model", *map(md, classes)], rows), ""]
    conditions = paper_condition_rows(report, md)
    if conditions:
        parts += [
            "### Paper conditions (each apart; the headline is with the paper)",
            "",
            _md_table(["Model", "With the paper", "Without", "Notes instead"], conditions),
            "",
        ]
    cached = prompt_cache_rows(report, md)
    if cached:
        parts += [
            "### Provider prompt cache",
            "",
            _md_table(["Model", "Input tokens", "Served from cache", "Saved (USD)"], cached),
            "",
        ]
    refined = agent_rows(report, md)
    if refined:
        parts += [
            "### Agent mode: pass@1 against pass after K",
            "",
            _md_table(AGENT_HEADER, refined),
            "",
        ]
    common = report.common_post_cutoff
    if common:
        parts += [_common_line(common, md), ""]
    parts.append(
        "Scaled pass@1 weights each snippet by its code lines (ResearchCodeBench's formula); "
        "the CI is a 95% bootstrap over snippets. Harness errors are not counted against a model."
    )
    if reproduction is not None:
        parts += ["", render_reproduction_markdown(reproduction).rstrip("\n")]
    return "\n".join(parts) + "\n"


def _funnel_cell(step: FunnelStep) -> str:
    return f"{step.passed} ({_pct(step.share)}%)"


def _conditional_cell(step: FunnelStep) -> str:
    rate = step.failed_when_reached
    if rate is None:
        return "-"
    return f"{_pct(rate)}% ({step.reached - step.passed} / {step.reached})"


def as_section(section: ReproductionSection | Mapping[str, Any]) -> ReproductionSection:
    """The reproduction section as its model (the plain data of
    :func:`rcb_action.reproduce.reproduction_section` is validated through it)."""
    if isinstance(section, ReproductionSection):
        return section
    return ReproductionSection.model_validate(section)


def reproduction_tables(
    section: ReproductionSection | Mapping[str, Any], text: Escape = _raw
) -> list[tuple[str, list[str], list[list[str]]]]:
    """The reproduction section as (title, header, rows) tables: failure rates per
    dimension, the stage funnel, and the plan score beside execution success."""
    section = as_section(section)
    models = section.models
    dimensions = section.dimensions
    stages = section.stages
    rates = [
        [
            text(name),
            str(entry.attempts),
            *[_pct(entry.failure_rates[d]) for d in dimensions],
            str(entry.needs_review),
            str(entry.harness_errors),
        ]
        for name, entry in models.items()
    ]
    funnel = [
        [text(name), *[_funnel_cell(s) for s in entry.funnel]] for name, entry in models.items()
    ]
    conditional = [
        [text(name), *[_conditional_cell(s) for s in entry.funnel]]
        for name, entry in models.items()
    ]
    if len(models) > 1:
        funnel.append(["all models", *[_funnel_cell(s) for s in section.funnel]])
        conditional.append(["all models", *[_conditional_cell(s) for s in section.funnel]])
    gap = [
        [
            text(name),
            _pct(entry.plan_score),
            _pct(entry.execution_success),
            "-" if entry.plan_execution_gap is None else f"{entry.plan_execution_gap:+.1f}",
            _pct(entry.full_reproduction),
            ", ".join(f"{k} {v}" for k, v in entry.failed_stages.items()) or "-",
        ]
        for name, entry in models.items()
    ]
    tables = [
        (
            "Reproduction track: failure rate per dimension (% of attempts)",
            ["Model", "Attempts", *dimensions.values(), "Needs review", "Harness errors"],
            rates,
        ),
        (
            "Stage funnel (attempts that passed the stage and every one before it)",
            ["Model", *stages.values()],
            funnel,
        ),
        (
            "Failed at each stage, of the attempts that reached it (%, failed / reached)",
            ["Model", *stages.values()],
            conditional,
        ),
        (
            "Planning vs doing (%)",
            ["Model", "Plan score", "Execution success", "Gap", "Full reproduction", "Failed at"],
            gap,
        ),
    ]
    lives = {n: e.post_cutoff for n, e in models.items() if e.post_cutoff is not None}
    if len(lives) == len(models):
        common = section.common_post_cutoff
        live = []
        for name, after in lives.items():
            row = [
                text(name),
                after.cutoff or "unknown",
                str(after.attempts),
                _pct(after.full_reproduction),
            ]
            if common:
                every = common.models[name]
                row += [str(every.attempts), _pct(every.full_reproduction)]
            live.append(row)
        header = ["Model", "Cutoff", "Attempts", "Full reproduction"]
        title = "Live subset: papers after the model's cutoff"
        if common:
            header += ["Attempts after every cutoff", "Full reproduction after every cutoff"]
            title += f", and after every cutoff ({common.after})"
        tables.append((title + " (%)", header, live))
    return tables


TARGET_SOURCES = {"paper": "the paper's own numbers", "gold": "rcb's gold run, not the paper"}


def _reproduction_notes(section: ReproductionSection, text: Escape = _raw) -> list[str]:
    targets = section.targets
    notes = []
    if targets:
        notes.append(
            "Targets: "
            + "; ".join(
                f"{text(task)}: {TARGET_SOURCES.get(source, 'not recorded')}"
                for task, source in targets.items()
            )
            + "."
        )
    notes += [
        f"Task {text(task)} is invalid (its gold run fails: "
        f"{text(str(info.get('message') or info.get('failed_stage')))}); no model is scored on it."
        for task, info in section.invalid_tasks.items()
    ]
    notes += [
        f"Needs review: {text(r.task)} / {text(r.model)} / sample {r.sample}: "
        + text("; ".join(r.reasons))
        for r in section.needs_review
    ]
    return notes


def print_reproduction(
    section: ReproductionSection | Mapping[str, Any], console: Console | None = None
) -> None:
    """The reproduction section: five failure rates per model, the funnel, plan vs execution."""
    section = as_section(section)
    console = console or Console(width=None if Console().is_terminal else 140)
    if not section.models:
        console.print("Reproduction track: no scored attempts.")
    else:
        for title, header, rows in reproduction_tables(section):
            console.print(_table(title, header, rows))
    for note in _reproduction_notes(section):
        _say(console, note)


def render_reproduction_markdown(section: ReproductionSection | Mapping[str, Any]) -> str:
    """The reproduction section as GitHub-flavoured Markdown."""
    section = as_section(section)
    parts = ["## rcb reproduction track", ""]
    if not section.models:
        parts += ["No scored attempts.", ""]
    tables = reproduction_tables(section, markdown_text) if section.models else []
    for title, header, rows in tables:
        parts += [f"### {title}", "", _md_table(header, rows), ""]
    parts += [f"- {note}" for note in _reproduction_notes(section, markdown_text)]
    return "\n".join(parts).rstrip("\n") + "\n"
