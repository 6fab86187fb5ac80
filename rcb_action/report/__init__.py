"""Reports: scores per model with intervals, per task, failure classes, contamination subsets."""

from rcb_action.report._build import (
    agent_mode,
    build_report,
    outcomes_of,
    post_cutoff,
    summarize,
)
from rcb_action.report._render import (
    print_report,
    print_reproduction,
    render_markdown,
    render_reproduction_markdown,
    reproduction_tables,
)

__all__ = [
    "agent_mode",
    "build_report",
    "outcomes_of",
    "post_cutoff",
    "print_report",
    "print_reproduction",
    "render_markdown",
    "render_reproduction_markdown",
    "reproduction_tables",
    "summarize",
]
