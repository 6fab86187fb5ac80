"""Result consistency, computed from the harness's own run of the attempt's code.

Each metric's mean over the runs must lie within the published mean +- 2 std; the
relative error is reported beside it. Curve facts are checked on the reported
curves. A success that looks too good is flagged for a person, not trusted: the
metrics are in range but a curve fact fails, the train and test splits share
examples (by their hashes), or the code shows no sign of a module the method needs.
"""

from __future__ import annotations

import math
import re
import statistics
from dataclasses import dataclass, field
from typing import Any, Literal

from rcb_action.reproduce._records import CurveCheck, MetricCheck
from rcb_action.tasks import CurveFact, ExpectedResults, ReproductionConfig

# Relative errors above this are a signal worth showing, even inside the range.
RELATIVE_ERROR_SIGNAL = 0.01


@dataclass
class ResultGrade:
    """The result check of one attempt."""

    metrics: dict[str, MetricCheck] = field(default_factory=dict)
    curves: list[CurveCheck] = field(default_factory=list)
    review_reasons: list[str] = field(default_factory=list)

    @property
    def metrics_in_range(self) -> bool:
        return bool(self.metrics) and all(m.in_range for m in self.metrics.values())

    @property
    def needs_review(self) -> bool:
        """Numbers in range with a red flag beside them: a person decides."""
        return self.metrics_in_range and bool(self.review_reasons)

    @property
    def passed(self) -> bool:
        return (
            self.metrics_in_range and all(c.passed for c in self.curves) and not self.review_reasons
        )

    def error(self) -> str | None:
        if self.passed:
            return None
        if self.needs_review:
            return "suspicious success, needs review: " + "; ".join(self.review_reasons)
        wrong = [m for m in self.metrics.values() if not m.in_range]
        parts = [
            m.error
            or f"{m.name} = {m.mean:.4g}, outside [{m.low:.4g}, {m.high:.4g}] ({m.direction})"
            for m in wrong
        ]
        parts += [f"curve {c.curve}: {c.detail}" for c in self.curves if not c.passed]
        return "; ".join(parts) or "no metrics"


def _numbers(value: Any) -> list[float]:
    values = value if isinstance(value, list) else [value]
    out = []
    for item in values:
        if isinstance(item, bool) or not isinstance(item, int | float):
            raise ValueError(f"{item!r} is not a number")
        if not math.isfinite(item):
            raise ValueError(f"{item!r} is not finite")
        out.append(float(item))
    return out


def check_metric(name: str, value: Any, expected: ExpectedResults, runs: int) -> MetricCheck:
    """One reported metric (a list with one value per run) against its expectation."""
    published = expected.metrics[name]
    low, high = published.mean - 2 * published.std, published.mean + 2 * published.std
    base: dict[str, Any] = {
        "name": name,
        "published_mean": published.mean,
        "published_std": published.std,
        "low": low,
        "high": high,
        "higher_is_better": published.higher_is_better,
    }
    if value is None:
        return MetricCheck(**base, in_range=False, error=f"{name}: not reported")
    try:
        values = _numbers(value)
    except ValueError as exc:
        return MetricCheck(**base, in_range=False, error=f"{name}: {exc}")
    if len(values) < runs:
        return MetricCheck(
            **base,
            reproduced=values,
            in_range=False,
            error=f"{name}: {len(values)} run(s) reported; the task asks for {runs}",
        )
    mean = statistics.fmean(values)
    std = statistics.stdev(values) if len(values) > 1 else 0.0
    in_range = low <= mean <= high
    direction: Literal["better", "worse"] | None = None
    if not in_range:
        above = mean > high
        direction = "better" if above == published.higher_is_better else "worse"
    relative = abs(mean - published.mean) / abs(published.mean) if published.mean else None
    return MetricCheck(
        **base,
        reproduced=values,
        mean=mean,
        std=std,
        in_range=in_range,
        relative_error=relative,
        relative_error_signal=relative is not None and relative > RELATIVE_ERROR_SIGNAL,
        direction=direction,
    )


def _curve_points(value: Any) -> list[tuple[float, float]]:
    if not isinstance(value, dict):
        raise ValueError("expected an object with lists 'x' and 'y'")
    xs, ys = _numbers(value.get("x", [])), _numbers(value.get("y", []))
    if not xs or len(xs) != len(ys):
        raise ValueError(f"'x' and 'y' must be non-empty and equally long ({len(xs)}, {len(ys)})")
    return sorted(zip(xs, ys, strict=True))


def check_curve(fact: CurveFact, value: Any) -> CurveCheck:
    """One curve fact on the reported curve."""
    base = {"curve": fact.curve, "kind": fact.kind, "description": fact.description}
    if value is None:
        return CurveCheck(**base, passed=False, detail="curve not reported")
    try:
        points = _curve_points(value)
    except ValueError as exc:
        return CurveCheck(**base, passed=False, detail=str(exc))
    if fact.kind == "settles_by":
        assert fact.target is not None and fact.by is not None
        settled_from = None
        for x, y in reversed(points):
            if abs(y - fact.target) > fact.tol:
                break
            settled_from = x
        if settled_from is None:
            detail = f"never settles within {fact.tol:g} of {fact.target:g}"
            return CurveCheck(**base, passed=False, detail=detail)
        passed = settled_from <= fact.by
        detail = (
            f"settles within {fact.tol:g} of {fact.target:g} from x = {settled_from:g} "
            f"(the paper: by {fact.by:g})"
        )
        return CurveCheck(**base, passed=passed, detail=detail)
    if fact.kind == "value_at":
        assert fact.target is not None and fact.at is not None
        at = fact.at
        match = [y for x, y in points if abs(x - at) <= 1e-9 * max(1.0, abs(at))]
        if not match:
            return CurveCheck(**base, passed=False, detail=f"no point at x = {at:g}")
        y = match[0]
        passed = abs(y - fact.target) <= fact.tol
        detail = f"y({at:g}) = {y:.6g}; the paper: {fact.target:g} +- {fact.tol:g}"
        return CurveCheck(**base, passed=passed, detail=detail)
    ys = [abs(y) if fact.absolute else y for _, y in points]
    sign = -1.0 if fact.direction == "decreasing" else 1.0
    back = [
        (points[i + 1][0], sign * (ys[i] - ys[i + 1]))
        for i in range(len(ys) - 1)
        if sign * (ys[i] - ys[i + 1]) > fact.tol
    ]
    what = f"{'|y|' if fact.absolute else 'y'} {fact.direction}"
    if back:
        x, by = back[0]
        return CurveCheck(**base, passed=False, detail=f"{what} breaks at x = {x:g} (by {by:.3g})")
    return CurveCheck(**base, passed=True, detail=f"{what} (steps back at most {fact.tol:g})")


def _review_reasons(
    reported: dict[str, Any], expected: ExpectedResults, curves: list[CurveCheck], code: str
) -> list[str]:
    reasons = [f"curve {c.curve} does not match: {c.detail}" for c in curves if not c.passed]
    splits = reported.get("splits")
    splits = splits if isinstance(splits, dict) else {}
    for a, b in expected.disjoint_splits:
        first, second = splits.get(a), splits.get(b)
        if not isinstance(first, list) or not isinstance(second, list):
            reasons.append(f"split hashes for '{a}' and '{b}' not reported: overlap unchecked")
            continue
        shared = {str(h) for h in first} & {str(h) for h in second}
        if shared:
            reasons.append(f"{len(shared)} example(s) appear in both '{a}' and '{b}'")
    for module in expected.modules:
        if not any(re.search(p, code) for p in module.patterns):
            reasons.append(f"no code for '{module.name}' found")
    return reasons


def grade_results(
    reported: dict[str, Any],
    expected: ExpectedResults,
    settings: ReproductionConfig,
    code: str,
) -> ResultGrade:
    """Grade the harness's run of an attempt.

    Args:
        reported: the parsed ``results.json`` of that run.
        expected: the task's ``expected.yaml``.
        settings: the task's ``reproduction`` block (how many runs).
        code: the attempt's code, all files joined (for the module check).
    """
    metrics = reported.get("metrics")
    metrics = metrics if isinstance(metrics, dict) else {}
    curves = reported.get("curves")
    curves = curves if isinstance(curves, dict) else {}
    grade = ResultGrade(
        metrics={
            name: check_metric(name, metrics.get(name), expected, settings.runs)
            for name in expected.metrics
        },
        curves=[check_curve(fact, curves.get(fact.curve)) for fact in expected.curves],
    )
    if grade.metrics_in_range:
        grade.review_reasons = _review_reasons(reported, expected, grade.curves, code)
    return grade
