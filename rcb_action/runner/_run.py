"""One library call for a whole evaluation: run it, then build its report.

``rcb evaluate`` and the Action's evaluate step both call :func:`run_evaluation` with
typed options (:class:`EvalConfig`); neither goes through the command-line parser.
"""

from __future__ import annotations

import sys
from dataclasses import dataclass

from rcb_action.models import Model, load_registry
from rcb_action.report import Report, build_report, print_report
from rcb_action.results import ResultStore
from rcb_action.runner._evaluate import EvalConfig, EvalSummary, evaluate


@dataclass(frozen=True)
class Evaluation:
    """What :func:`run_evaluation` did (``summary``) and the report of its models."""

    summary: EvalSummary
    report: Report


def run_evaluation(config: EvalConfig, *, model_objects: list[Model] | None = None) -> Evaluation:
    """Run an evaluation (see :func:`evaluate`) and report on the run's models over every
    record in ``config.out`` (earlier runs' attempts included: the store resumes).

    Raises:
        RcbError: a user-fixable problem (unknown model, bad task, missing key).
        KeyboardInterrupt: the run was interrupted; what finished is recorded.
    """
    summary = evaluate(config, model_objects=model_objects)
    registry = load_registry(config.registry_files)
    records = [r for r in ResultStore(config.out).records() if r.model in summary.models]
    return Evaluation(summary, build_report(records, registry, source=str(config.out)))


def finish_evaluation(run: Evaluation, *, fail_under: float | None = None) -> int:
    """Say how the run went (its time on stderr, the report table on stdout) and give its
    exit status: 1 when a model's scaled pass@1 is below ``fail_under``, else 0."""
    summary = run.summary
    if summary.seconds:
        print(
            f"rcb: {summary.done} attempt(s) in {summary.seconds:.0f} s "
            f"({summary.env_seconds:.0f} s of it building environments)",
            file=sys.stderr,
        )
    print_report(run.report)
    low = run.report.below(fail_under) if fail_under is not None else []
    if low:
        print(f"rcb: below --fail-under {fail_under}: {', '.join(low)}")
        return 1
    return 0
