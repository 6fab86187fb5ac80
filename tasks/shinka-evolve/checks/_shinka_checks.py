"""Helpers the checks share: nested comparison with tolerances, and the paper's
closed forms re-derived independently of the code under test."""

import math

import numpy as np

# Probabilities and bandit statistics are a few float operations deep; a correct
# implementation may order them differently (sums, logsumexp, division before or
# after a product), which moves results by a few ulps. 1e-9 relative is far below
# any difference a wrong formula makes in these cases.
RTOL = 1e-9
ATOL = 1e-12


def assert_close(got, want, rtol=RTOL, atol=ATOL, where="value"):
    if isinstance(want, dict):
        assert isinstance(got, dict), f"{where}: expected a mapping, got {type(got).__name__}"
        assert set(got) == set(want), f"{where}: keys {sorted(got)} != {sorted(want)}"
        for k in want:
            assert_close(got[k], want[k], rtol, atol, f"{where}[{k!r}]")
        return
    if isinstance(want, (list, tuple)) and want and isinstance(want[0], (dict, list, tuple)):
        assert isinstance(got, (list, tuple)) and len(got) == len(want), f"{where}: length differs"
        for i, (g, w) in enumerate(zip(got, want)):
            assert_close(g, w, rtol, atol, f"{where}[{i}]")
        return
    if isinstance(want, str):
        assert got == want, f"{where}: {got!r} != {want!r}"
        return
    assert got is not None, f"{where}: got None"
    g = np.asarray(got, dtype=np.float64)
    w = np.asarray(want, dtype=np.float64)
    assert g.shape == w.shape, f"{where}: shape {g.shape} != {w.shape}"
    np.testing.assert_allclose(g, w, rtol=rtol, atol=atol, err_msg=where)


def sigmoid(x):
    if x >= 0:
        return 1.0 / (1.0 + math.exp(-x))
    e = math.exp(x)
    return e / (1.0 + e)


def weighted_probs(rows, island, lam):
    """Weighted parent sampling: sigmoid of the fitness above the archive's median,
    in units of the median absolute deviation (floored at 1e-6), times the offspring
    penalty 1 / (1 + children); normalised."""
    elig = [
        r for r in rows
        if r["archived"] and r["correct"] == 1 and (island is None or r["island_idx"] == island)
    ]
    scores = [r["combined_score"] or 0.0 for r in elig]
    med = float(np.median(scores))
    mad = float(np.median([abs(s - med) for s in scores]))
    scale = max(mad, 1e-6)
    w = np.array([sigmoid(lam * (s - med) / scale) / (1.0 + r["children_count"]) for s, r in zip(scores, elig)])
    return [r["id"] for r in elig], w / w.sum()


def counts_match(ids, labels, probs, sigmas=5.0):
    """Empirical frequencies of `ids` over `labels` within `sigmas` binomial errors."""
    n = len(ids)
    for lab, p in zip(labels, probs):
        k = sum(1 for x in ids if x == lab)
        sd = math.sqrt(max(n * p * (1 - p), 1e-12))
        assert abs(k - n * p) <= sigmas * sd + 1.0, f"{lab}: {k} of {n} draws, expected {n * p:.1f}"
    assert set(ids) <= set(labels), f"drew outside the eligible set: {set(ids) - set(labels)}"


def ucb_exp_probs(history, c, eps, n_arms, submitted=None):
    """UCB1 over asymmetric exponential rewards (baseline 0, no decay):
    reward exp(max(r, 0)) - 1, mean per arm, divided by the largest single reward seen;
    bonus c * sqrt(2 ln t / n_i); the best arm gets 1 - eps, the others share eps."""
    contrib = {a: [] for a in range(n_arms)}
    for arm, r in history:
        contrib[arm].append(math.expm1(max(r, 0.0)))
    top = max(x for v in contrib.values() for x in v)
    n = np.array([max(len(contrib[a]), (submitted or {}).get(a, 0)) for a in range(n_arms)], float)
    t = n.sum()
    base = np.array([np.mean(contrib[a]) / top for a in range(n_arms)])
    scores = base + c * np.sqrt(2.0 * math.log(max(t, 2.0)) / n)
    best = np.flatnonzero(scores == scores.max())
    p = np.full(n_arms, eps / (n_arms - best.size))
    p[best] = (1.0 - eps) / best.size
    return p
