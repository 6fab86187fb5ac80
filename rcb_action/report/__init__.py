"""Reports: scores per model with intervals, per task, failure classes, contamination subsets."""

from rcb_action.report._build import (
    FORGEABLE_LABEL,
    IN_PROCESS,
    agent_mode,
    build_report,
    forgeable_snippets,
    outcomes_of,
    post_cutoff,
    summarize,
    task_grading,
)
from rcb_action.report._escape import markdown_text, one_line, terminal_text
from rcb_action.report._render import (
    grading_label,
    grading_note,
    print_report,
    print_reproduction,
    render_markdown,
    render_reproduction_markdown,
    reproduction_tables,
    task_gradings,
)

__all__ = [
    "FORGEABLE_LABEL",
    "IN_PROCESS",
    "agent_mode",
    "build_report",
    "forgeable_snippets",
    "grading_label",
    "grading_note",
    "markdown_text",
    "one_line",
    "outcomes_of",
    "post_cutoff",
    "print_report",
    "print_reproduction",
    "render_markdown",
    "render_reproduction_markdown",
    "reproduction_tables",
    "summarize",
    "task_grading",
    "task_gradings",
    "terminal_text",
]
