"""Metrics over scored attempts.

Scaled pass@1 (ResearchCodeBench's headline number, so results compare with its
table): for each sample, ``100 * sum(w_s for passed s) / sum(w_s)`` over the
snippets in scope, then the mean over samples. ``w_s`` is the snippet's code-line
count in the reference (nested snippets count in each enclosing snippet).
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from math import comb

import numpy as np

BOOTSTRAP_RESAMPLES = 2000
BOOTSTRAP_SEED = 20250602


@dataclass(frozen=True)
class Outcome:
    """One scored attempt, reduced to what the metrics need."""

    task: str
    snippet: str
    sample: int
    weight: int
    passed: bool


def _by_sample(outcomes: Iterable[Outcome]) -> dict[int, list[Outcome]]:
    groups: dict[int, list[Outcome]] = defaultdict(list)
    for outcome in outcomes:
        groups[outcome.sample].append(outcome)
    return groups


def scaled_pass_at_1(outcomes: Sequence[Outcome]) -> float | None:
    """Line-weighted pass rate in percent, averaged over samples (None when empty)."""
    scores = []
    for group in _by_sample(outcomes).values():
        total = sum(o.weight for o in group)
        if total:
            scores.append(100.0 * sum(o.weight for o in group if o.passed) / total)
    return float(np.mean(scores)) if scores else None


def pass_rate(outcomes: Sequence[Outcome]) -> float | None:
    """Unweighted share of snippets passed, in percent, averaged over samples."""
    scores = [
        100.0 * sum(o.passed for o in group) / len(group) for group in _by_sample(outcomes).values()
    ]
    return float(np.mean(scores)) if scores else None


def per_task(outcomes: Sequence[Outcome]) -> dict[str, dict[str, float | None]]:
    """Scaled pass@1 and pass rate for each task, and its weight (the lines of its
    snippets), so a headline can be recomputed on any subset of tasks."""
    groups: dict[str, list[Outcome]] = defaultdict(list)
    for outcome in outcomes:
        groups[outcome.task].append(outcome)
    return {
        task: {
            "scaled_pass_at_1": scaled_pass_at_1(group),
            "pass_rate": pass_rate(group),
            "weight": float(sum({o.snippet: o.weight for o in group}.values())),
        }
        for task, group in sorted(groups.items())
    }


def macro_task_mean(outcomes: Sequence[Outcome]) -> float | None:
    """The mean of per-task scaled pass@1: every paper counts the same."""
    scores = [
        v["scaled_pass_at_1"]
        for v in per_task(outcomes).values()
        if v["scaled_pass_at_1"] is not None
    ]
    return float(np.mean(scores)) if scores else None


def _per_snippet(outcomes: Iterable[Outcome]) -> dict[tuple[str, str], tuple[int, int, int]]:
    """(task, snippet) -> (weight, samples, passes)."""
    table: dict[tuple[str, str], list[int]] = {}
    for o in outcomes:
        row = table.setdefault((o.task, o.snippet), [o.weight, 0, 0])
        row[1] += 1
        row[2] += int(o.passed)
    return {key: (w, n, c) for key, (w, n, c) in table.items()}


def unbiased_pass_at_k(n: int, c: int, k: int) -> float:
    """The unbiased estimator ``1 - C(n-c, k) / C(n, k)`` (Chen et al., 2021)."""
    if n - c < k:
        return 1.0
    return 1.0 - comb(n - c, k) / comb(n, k)


def pass_at_k(outcomes: Sequence[Outcome], k: int, *, weighted: bool = True) -> float | None:
    """pass@k in percent over snippets with at least ``k`` samples (None if there are none)."""
    rows = [(w, n, c) for (w, n, c) in _per_snippet(outcomes).values() if n >= k]
    if not rows:
        return None
    weights = np.array([w if weighted else 1 for w, _, _ in rows], dtype=float)
    scores = np.array([unbiased_pass_at_k(n, c, k) for _, n, c in rows])
    if weights.sum() == 0:
        return None
    return float(100.0 * (weights * scores).sum() / weights.sum())


def _weights_and_rates(
    outcomes: Iterable[Outcome],
) -> tuple[list[tuple[str, str]], np.ndarray, np.ndarray]:
    table = _per_snippet(outcomes)
    keys = sorted(table)
    weights = np.array([table[k][0] for k in keys], dtype=float)
    rates = np.array([table[k][2] / table[k][1] for k in keys], dtype=float)
    return keys, weights, rates


def _resample_index(size: int, resamples: int, seed: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    return rng.integers(0, size, size=(resamples, size))


def bootstrap_ci(
    outcomes: Sequence[Outcome], *, resamples: int = BOOTSTRAP_RESAMPLES, seed: int = BOOTSTRAP_SEED
) -> tuple[float, float] | None:
    """95% percentile bootstrap interval of scaled pass@1, resampling snippets.

    Each snippet enters with its pass rate over samples; the seed is fixed, so the
    same results always give the same interval.
    """
    _, weights, rates = _weights_and_rates(outcomes)
    if len(weights) == 0 or weights.sum() == 0:
        return None
    index = _resample_index(len(weights), resamples, seed)
    w = weights[index]
    totals = w.sum(axis=1)
    stats = 100.0 * (w * rates[index]).sum(axis=1) / np.where(totals == 0, 1, totals)
    low, high = np.percentile(stats, [2.5, 97.5])
    return round(float(low), 2), round(float(high), 2)


def paired_bootstrap(
    a: Sequence[Outcome],
    b: Sequence[Outcome],
    *,
    resamples: int = BOOTSTRAP_RESAMPLES,
    seed: int = BOOTSTRAP_SEED,
) -> dict[str, float] | None:
    """Scaled pass@1 of ``a`` minus ``b`` on the snippets both attempted, with a paired
    95% interval (the same snippets resampled for both models)."""
    keys_a, w_a, r_a = _weights_and_rates(a)
    keys_b, _, r_b = _weights_and_rates(b)
    common = sorted(set(keys_a) & set(keys_b))
    if not common:
        return None
    ia = {k: i for i, k in enumerate(keys_a)}
    ib = {k: i for i, k in enumerate(keys_b)}
    w = np.array([w_a[ia[k]] for k in common])
    diff = np.array([r_a[ia[k]] - r_b[ib[k]] for k in common])
    if w.sum() == 0:
        return None
    index = _resample_index(len(common), resamples, seed)
    ww = w[index]
    stats = 100.0 * (ww * diff[index]).sum(axis=1) / np.maximum(ww.sum(axis=1), 1e-12)
    low, high = np.percentile(stats, [2.5, 97.5])
    return {
        "difference": round(float(100.0 * (w * diff).sum() / w.sum()), 2),
        "ci95_low": round(float(low), 2),
        "ci95_high": round(float(high), 2),
        "snippets": len(common),
    }
