"""The paper text a reproduction agent is given (snippet prompts use :mod:`rcb_action.papers`)."""

from __future__ import annotations

from rcb_action.errors import TaskError
from rcb_action.papers import paper_for
from rcb_action.tasks import Task


def paper_text(task: Task) -> str:
    """The paper for ``task``: a reproduction task's ``paper.md`` (``paper: {source:
    local}``, the experiment's specification), else the paper's own text.

    Raises:
        TaskError: a ``local`` paper.md that is missing.
        PaperUnavailable: the paper's text cannot be had (never replaced by another).
    """
    if task.config.paper.source == "local":
        path = task.root / "paper.md"
        if not path.is_file():
            raise TaskError(f"{path}: file not found (paper: {{source: local}} needs it)")
        return task.read_bytes("paper.md").decode("utf-8")
    return paper_for(task).text
