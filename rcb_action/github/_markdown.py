"""The Markdown rcb writes on GitHub: the job summary and the pull-request comment."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from rcb_action.github._compare import Comparison, format_delta, render_comparison
from rcb_action.report import Report, Summary, grading_note, markdown_text, render_markdown


def _pct(value: float | None) -> str:
    return "-" if value is None else f"{value:.1f}"


def _ci(entry: Summary) -> str:
    ci = entry.ci95
    return "" if not ci else f" [{ci[0]:.1f}, {ci[1]:.1f}]"


def as_report(report: Report | Mapping[str, Any]) -> Report:
    """``report`` as the model (plain data, as ``report.json`` holds it, is validated)."""
    return report if isinstance(report, Report) else Report.from_data(report, source="report")


def score_table(report: Report | Mapping[str, Any], comparison: Comparison | None = None) -> str:
    """Models ranked by scaled pass@1, with the change against the base when known; then,
    when some tasks were graded by in-process tests, a line saying so.

    Model names are escaped (:func:`rcb_action.report.markdown_text`): a name cannot
    add lines, HTML, links or mentions, nor leave its cell."""
    header = [
        "Model",
        "Scaled pass@1 [95% CI]",
        "Pass rate",
        "Snippets",
        "In-process (forgeable)",
        "Harness errors",
    ]
    if comparison is not None:
        header.append("Change vs base")
    lines = ["| " + " | ".join(header) + " |", "|" + "|".join(" --- " for _ in header) + "|"]
    report = as_report(report)
    ranked = sorted(
        report.models.items(), key=lambda kv: (-(kv[1].scaled_pass_at_1 or -1.0), kv[0])
    )
    for name, entry in ranked:
        row = [
            markdown_text(name),
            f"**{_pct(entry.scaled_pass_at_1)}**{_ci(entry)}",
            _pct(entry.pass_rate),
            str(entry.snippets),
            str(entry.forgeable_snippets),
            str(entry.harness_errors),
        ]
        if comparison is not None:
            change = comparison.for_model(name)
            row.append(format_delta(change.delta) if change else "-")
        lines.append("| " + " | ".join(row) + " |")
    note = grading_note(report, markdown_text)
    if note:
        lines += ["", f"⚠️ {note}"]
    return "\n".join(lines) + "\n"


def _notes(notes: Sequence[str]) -> str:
    quoted = ["> " + note.strip().replace("\n", "\n> ") + "\n" for note in notes if note.strip()]
    return ">\n".join(quoted)


def render_summary(
    report: Report,
    *,
    comparison: Comparison | None = None,
    notes: Sequence[str] = (),
    title: str = "rcb",
) -> str:
    """The job summary: the headline table, notes, the comparison, then the full report."""
    parts = [f"# {title}", "", score_table(report, comparison)]
    if notes:
        parts += [_notes(notes)]
    if comparison is not None:
        parts += [render_comparison(comparison)]
    parts += [render_markdown(report)]
    return "\n".join(parts)


def render_comment(
    report: Report,
    *,
    marker: str,
    comparison: Comparison | None = None,
    notes: Sequence[str] = (),
    run_url: str = "",
    title: str = "rcb",
) -> str:
    """The pull-request comment: hidden marker, headline table, comparison, details folded."""
    parts = [marker, f"### {title}", "", score_table(report, comparison)]
    if comparison is None:
        parts.append("_No results from the base branch to compare with._\n")
    else:
        parts.append(render_comparison(comparison))
    if notes:
        parts.append(_notes(notes))
    parts += [
        "<details><summary>Per task and failure classes</summary>",
        "",
        render_markdown(report),
        "</details>",
        "",
    ]
    if run_url:
        parts.append(f"[Run]({run_url}) · updated in place on every run\n")
    return "\n".join(parts)
