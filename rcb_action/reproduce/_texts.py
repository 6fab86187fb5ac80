"""What a reproduction agent and its judge read: the paper's own text, from the paper
pipeline (:mod:`rcb_action.papers`: the pinned arXiv LaTeX, cached, or a vendored full
text), and the task's ``experiment.md``, rcb's specification of the experiment at the
task's scale. The specification is never given as the paper.

A scripted agent (the reference, the baselines) reads neither, so it runs without the
paper when the paper is not cached; a model or a judge never does.
"""

from __future__ import annotations

from dataclasses import dataclass

from rcb_action.papers import Paper, PaperUnavailable, cached_paper, paper_for
from rcb_action.tasks import EXPERIMENT_FILE, Task

# The paper's text in the agent's folder (the experiment's specification lies beside it).
PAPER_FILE = "paper.txt"
NO_PAPER = "(the paper's text is not at hand: this scripted agent does not read it)"


@dataclass(frozen=True)
class ReproductionTexts:
    """The paper (None: a scripted agent's attempt without it) and the experiment."""

    paper: Paper | None
    experiment: str

    @property
    def paper_text(self) -> str:
        return self.paper.text if self.paper else NO_PAPER

    @property
    def paper_sha(self) -> str | None:
        return self.paper.sha if self.paper else None


def reproduction_texts(task: Task, *, need_paper: bool) -> ReproductionTexts:
    """The texts of an attempt at ``task``.

    Args:
        need_paper: a model or a judge will read the paper: fetch it when it is not
            cached, and fail rather than go on without it.

    Raises:
        PaperUnavailable: ``need_paper`` and the paper's text cannot be had (one line
            naming the task and the fix; never replaced by another text).
    """
    experiment = task.read_bytes(EXPERIMENT_FILE).decode("utf-8")
    if need_paper:
        return ReproductionTexts(paper_for(task), experiment)
    try:
        paper = cached_paper(task)
    except PaperUnavailable:
        paper = None
    return ReproductionTexts(paper, experiment)
