"""Render a report as terminal tables or Markdown (job summaries, PR comments)."""

from __future__ import annotations

from typing import Any

from rich.console import Console
from rich.table import Table


def _pct(value: float | None) -> str:
    return "-" if value is None else f"{value:.1f}"


def _ci(entry: dict[str, Any]) -> str:
    ci = entry.get("ci95")
    return "-" if not ci else f"[{ci[0]:.1f}, {ci[1]:.1f}]"


def _ranked(report: dict[str, Any]) -> list[tuple[str, dict[str, Any]]]:
    return sorted(
        report["models"].items(), key=lambda kv: (-(kv[1]["scaled_pass_at_1"] or -1), kv[0])
    )


def _post(entry: dict[str, Any]) -> str:
    post = entry["post_cutoff"]
    if post["cutoff"] is None:
        return "n/a (no cutoff)"
    return f"{_pct(post['scaled_pass_at_1'])} ({post['snippets']} snippets after {post['cutoff']})"


def overall_rows(report: dict[str, Any]) -> list[list[str]]:
    rows = []
    for rank, (name, entry) in enumerate(_ranked(report), 1):
        rows.append(
            [
                str(rank),
                name,
                f"{_pct(entry['scaled_pass_at_1'])} {_ci(entry)}",
                _pct(entry["pass_rate"]),
                str(entry["snippets"]),
                _post(entry),
                f"${entry['cost_usd']:.2f}",
                str(entry["harness_errors"]),
            ]
        )
    return rows


OVERALL_HEADER = [
    "#",
    "Model",
    "Scaled pass@1 [95% CI]",
    "Pass rate",
    "Snippets",
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


def agent_rows(report: dict[str, Any]) -> list[list[str]]:
    """Agent mode (``--agent-turns K``): pass@1 against pass-after-K, per model and K."""
    rows = []
    for name, entry in _ranked(report):
        for k, mode in entry.get("agent_mode", {}).items():
            rows.append(
                [
                    name,
                    k,
                    str(mode["attempts"]),
                    _pct(mode["scaled_pass_at_1"]),
                    _pct(mode["scaled_pass_after_k"]),
                    _pct(mode["pass_rate_at_1"]),
                    _pct(mode["pass_rate_after_k"]),
                    str(mode["fixed"]),
                    str(mode["broken"]),
                    "-" if mode["mean_turns_used"] is None else f"{mode['mean_turns_used']:.2f}",
                ]
            )
    return rows


def print_report(report: dict[str, Any], console: Console | None = None) -> None:
    """The overall table, per-task scores, failure classes and ablations."""
    console = console or Console(width=None if Console().is_terminal else 140)
    table = Table(title="rcb snippet track: scaled pass@1 (line-weighted, %)")
    for header in OVERALL_HEADER:
        table.add_column(header, justify="left" if header == "Model" else "right")
    for row in overall_rows(report):
        table.add_row(*row)
    console.print(table)

    models = [name for name, _ in _ranked(report)]
    tasks = sorted({t for e in report["models"].values() for t in e["tasks"]})
    if tasks:
        per_task = Table(title="Per task: scaled pass@1 / pass rate")
        per_task.add_column("Task")
        for name in models:
            per_task.add_column(name, justify="right")
        for task in tasks:
            cells = []
            for name in models:
                score = report["models"][name]["tasks"].get(task)
                cells.append(
                    "-"
                    if not score
                    else f"{_pct(score['scaled_pass_at_1'])} / {_pct(score['pass_rate'])}"
                )
            per_task.add_row(task, *cells)
        per_task.add_row(
            "macro mean",
            *[_pct(report["models"][n]["macro_task_mean"]) for n in models],
            style="bold",
        )
        console.print(per_task)

    classes = sorted({c for e in report["models"].values() for c in e["failure_classes"]})
    if classes:
        failures = Table(title="Failure classes (attempts)")
        failures.add_column("Model")
        for cls in classes:
            failures.add_column(cls, justify="right")
        for name in models:
            counts = report["models"][name]["failure_classes"]
            failures.add_row(name, *[str(counts.get(c, 0)) for c in classes])
        console.print(failures)

    for name in models:
        entry = report["models"][name]
        if entry.get("skipped"):
            console.print(
                f"{name}: {entry['skipped']} attempt(s) not run: {'; '.join(entry['skip_reasons'])}"
            )
        if "no_paper" in entry:
            console.print(
                f"Ablation {name}: with paper {_pct(entry['scaled_pass_at_1'])}, "
                f"without {_pct(entry['no_paper']['scaled_pass_at_1'])}"
            )
    refined = agent_rows(report)
    if refined:
        agent = Table(
            title="Agent mode: pass@1 against pass after K rewrites (hidden tests decide)"
        )
        for header in AGENT_HEADER:
            agent.add_column(header, justify="left" if header == "Model" else "right")
        for row in refined:
            agent.add_row(*row)
        console.print(agent)
    common = report.get("common_post_cutoff")
    if common:
        parts = [
            f"{n} {_pct(s['scaled_pass_at_1'])} ({s['snippets']} snippets)"
            for n, s in sorted(common["models"].items())
        ]
        console.print(
            f"Post-cutoff for every model (papers after {common['after']}): " + "; ".join(parts)
        )
    for comparison in report.get("comparisons", []):
        console.print(
            f"{comparison['a']} - {comparison['b']}: {comparison['difference']:+.1f} points "
            f"(paired 95% CI [{comparison['ci95_low']:.1f}, {comparison['ci95_high']:.1f}], "
            f"{comparison['snippets']} snippets)"
        )


def _md_table(header: list[str], rows: list[list[str]]) -> str:
    lines = ["| " + " | ".join(header) + " |", "|" + "|".join(" --- " for _ in header) + "|"]
    lines += ["| " + " | ".join(cell.replace("|", "\\|") for cell in row) + " |" for row in rows]
    return "\n".join(lines)


def render_markdown(report: dict[str, Any]) -> str:
    """The report as GitHub-flavoured Markdown (with the reproduction track's when present)."""
    reproduction = report.get("reproduction")
    if reproduction is not None and not report["models"]:
        return render_reproduction_markdown(reproduction)
    parts = ["## rcb snippet track", "", _md_table(OVERALL_HEADER, overall_rows(report)), ""]
    models = [name for name, _ in _ranked(report)]
    tasks = sorted({t for e in report["models"].values() for t in e["tasks"]})
    if tasks:
        rows = []
        for task in tasks:
            row = [task]
            for name in models:
                score = report["models"][name]["tasks"].get(task)
                row.append("-" if not score else _pct(score["scaled_pass_at_1"]))
            rows.append(row)
        rows.append(
            ["**macro mean**", *[_pct(report["models"][n]["macro_task_mean"]) for n in models]]
        )
        parts += ["### Per task (scaled pass@1)", "", _md_table(["Task", *models], rows), ""]
    classes = sorted({c for e in report["models"].values() for c in e["failure_classes"]})
    if classes:
        rows = [
            [n, *[str(report["models"][n]["failure_classes"].get(c, 0)) for c in classes]]
            for n in models
        ]
        parts += ["### Failure classes", "", _md_table(["Model", *classes], rows), ""]
    refined = agent_rows(report)
    if refined:
        parts += [
            "### Agent mode: pass@1 against pass after K",
            "",
            _md_table(AGENT_HEADER, refined),
            "",
        ]
    common = report.get("common_post_cutoff")
    if common:
        scores = "; ".join(
            f"{n} {_pct(c['scaled_pass_at_1'])} ({c['snippets']} snippets)"
            for n, c in sorted(common["models"].items())
        )
        parts += [f"Post-cutoff for every model (papers after {common['after']}): {scores}", ""]
    parts.append(
        "Scaled pass@1 weights each snippet by its code lines (ResearchCodeBench's formula); "
        "the CI is a 95% bootstrap over snippets. Harness errors are not counted against a model."
    )
    if reproduction is not None:
        parts += ["", render_reproduction_markdown(reproduction).rstrip("\n")]
    return "\n".join(parts) + "\n"


def _funnel_cell(step: dict[str, Any]) -> str:
    return f"{step['passed']} ({_pct(step['share'])}%)"


def reproduction_tables(section: dict[str, Any]) -> list[tuple[str, list[str], list[list[str]]]]:
    """The reproduction section as (title, header, rows) tables: failure rates per
    dimension, the stage funnel, and the plan score beside execution success."""
    models = section["models"]
    dimensions = section["dimensions"]
    stages = section["stages"]
    rates = [
        [
            name,
            str(entry["attempts"]),
            *[_pct(entry["failure_rates"][d]) for d in dimensions],
            str(entry["needs_review"]),
            str(entry["harness_errors"]),
        ]
        for name, entry in models.items()
    ]
    funnel = [[name, *[_funnel_cell(s) for s in entry["funnel"]]] for name, entry in models.items()]
    if len(models) > 1:
        funnel.append(["all models", *[_funnel_cell(s) for s in section["funnel"]]])
    gap = [
        [
            name,
            _pct(entry["plan_score"]),
            _pct(entry["execution_success"]),
            "-" if entry["plan_execution_gap"] is None else f"{entry['plan_execution_gap']:+.1f}",
            _pct(entry["full_reproduction"]),
            ", ".join(f"{k} {v}" for k, v in entry["failed_stages"].items()) or "-",
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
            "Planning vs doing (%)",
            ["Model", "Plan score", "Execution success", "Gap", "Full reproduction", "Failed at"],
            gap,
        ),
    ]
    if all("post_cutoff" in entry for entry in models.values()):
        common = section.get("common_post_cutoff")
        live = []
        for name, entry in models.items():
            after = entry["post_cutoff"]
            row = [
                name,
                after["cutoff"] or "unknown",
                str(after["attempts"]),
                _pct(after["full_reproduction"]),
            ]
            if common:
                every = common["models"][name]
                row += [str(every["attempts"]), _pct(every["full_reproduction"])]
            live.append(row)
        header = ["Model", "Cutoff", "Attempts", "Full reproduction"]
        title = "Live subset: papers after the model's cutoff"
        if common:
            header += ["Attempts after every cutoff", "Full reproduction after every cutoff"]
            title += f", and after every cutoff ({common['after']})"
        tables.append((title + " (%)", header, live))
    return tables


def _reproduction_notes(section: dict[str, Any]) -> list[str]:
    notes = [
        f"Task {task} is invalid (its gold run fails: {info.get('message') or info.get('failed_stage')}); "
        "no model is scored on it."
        for task, info in section["invalid_tasks"].items()
    ]
    notes += [
        f"Needs review: {r['task']} / {r['model']} / sample {r['sample']}: {'; '.join(r['reasons'])}"
        for r in section["needs_review"]
    ]
    return notes


def print_reproduction(section: dict[str, Any], console: Console | None = None) -> None:
    """The reproduction section: five failure rates per model, the funnel, plan vs execution."""
    console = console or Console(width=None if Console().is_terminal else 140)
    if not section["models"]:
        console.print("Reproduction track: no scored attempts.")
    else:
        for title, header, rows in reproduction_tables(section):
            table = Table(title=title)
            for column in header:
                table.add_column(column, justify="left" if column == "Model" else "right")
            for row in rows:
                table.add_row(*row)
            console.print(table)
    for note in _reproduction_notes(section):
        console.print(note)


def render_reproduction_markdown(section: dict[str, Any]) -> str:
    """The reproduction section as GitHub-flavoured Markdown."""
    parts = ["## rcb reproduction track", ""]
    if not section["models"]:
        parts += ["No scored attempts.", ""]
    for title, header, rows in reproduction_tables(section) if section["models"] else []:
        parts += [f"### {title}", "", _md_table(header, rows), ""]
    parts += [f"- {note}" for note in _reproduction_notes(section)]
    return "\n".join(parts).rstrip("\n") + "\n"
