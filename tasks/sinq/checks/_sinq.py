"""Helpers the SINQ checks share: the weight matrices the cases draw (same seeds, same
draws, in numpy), the matrix imbalance, and comparisons under stated tolerances."""

import os

import numpy as np

SEED = int(os.environ.get("RCB_SEED", "0"))


def weights(offset, rows, cols, spread=0.8, outliers=3, heavy=False):
    """rows x cols float32 weights, drawn exactly as cases/cases_sinq.py draws them:
    Gaussian (or Student-t, 3 dof) entries times log-normal row and column scales, plus
    a few large outliers."""
    rng = np.random.default_rng(SEED + offset)
    g = rng.standard_t(3, size=(rows, cols)) if heavy else rng.normal(size=(rows, cols))
    r = np.exp(spread * rng.normal(size=(rows, 1)))
    c = np.exp(spread * rng.normal(size=(1, cols)))
    w = 0.02 * g * r * c
    for _ in range(outliers):
        i, j = rng.integers(rows), rng.integers(cols)
        w[i, j] = 0.02 * rng.choice([-1.0, 1.0]) * rng.uniform(8.0, 20.0)
    return w.astype(np.float32)


def awq_scale():
    """The activation-aware column scale of the tiled case (cases' seed + 23)."""
    rng = np.random.default_rng(SEED + 23)
    return rng.uniform(0.5, 2.0, size=(1, 128)).astype(np.float32)


def imbalance(m):
    """The paper's matrix imbalance: largest over smallest of all row and column
    standard deviations (torch.std: ddof=1)."""
    m = np.asarray(m, dtype=np.float64)
    s1, s2 = m.std(axis=1, ddof=1), m.std(axis=0, ddof=1)
    return max(s1.max(), s2.max()) / max(min(s1.min(), s2.min()), 1e-12)


def arr(x):
    return np.asarray(x, dtype=np.float64)


def assert_close(out, ref, rtol, atol=0.0, what=""):
    out, ref = arr(out), arr(ref)
    assert out.shape == ref.shape, f"{what}: shape {out.shape}, expected {ref.shape}"
    np.testing.assert_allclose(out, ref, rtol=rtol, atol=atol, err_msg=what)


def assert_codes_close(out, ref, what="", share=0.005):
    """Integer codes: equal, except that a rounding tie may go the other way after a
    legitimate reordering of float32 work: at most `share` of the codes (and at least
    one) may differ, and then by one level."""
    out, ref = arr(out), arr(ref)
    assert out.shape == ref.shape, f"{what}: shape {out.shape}, expected {ref.shape}"
    diff = np.abs(out - ref)
    assert diff.max() <= 1.0, f"{what}: a code differs by {diff.max()}"
    n = int((diff > 0).sum())
    assert n <= max(1, int(share * out.size)), f"{what}: {n} of {out.size} codes differ"


def check_rtn_closed_form(W, q, s1, s2, z, max_int, what):
    """Uniform asymmetric RTN with dual scales, worked out from W and the column scale s2
    alone: the row scale is the range of the row of W / s2 over max_int (the row factor
    of the normalisation cancels), the shift is minus the rounded row minimum in scale
    units, and the codes are W / s2 / s1 + z rounded and clipped to [0, max_int]."""
    W, q, s1, s2, z = arr(W), arr(q), arr(s1), arr(s2), arr(z)
    assert np.all(s2 > 0), f"{what}: column scales must be positive"
    V = W / s2
    s1_exp = np.maximum(V.max(axis=1, keepdims=True) - V.min(axis=1, keepdims=True), 0.0) / max_int
    np.testing.assert_allclose(s1, s1_exp, rtol=2e-5, err_msg=f"{what}: row scale s1")
    z_exp = -np.round(V.min(axis=1, keepdims=True) / s1)
    assert_codes_close(z, z_exp, f"{what}: shift z", share=0.02)
    q_exp = np.clip(np.round(V / s1 + z), 0, max_int)
    assert np.all(q == np.round(q)) and q.min() >= 0 and q.max() <= max_int, f"{what}: codes out of range"
    assert_codes_close(q, q_exp, f"{what}: codes")
    check_error_bound(W, (q - z) * s1 * s2, s1 * s2, what)


def check_error_bound(W, W_r, unit, what):
    """Round to nearest: at most one step (the rounded shift can push the row's extreme
    one step out and clip it), half a step on average at most, a quarter typically."""
    err = np.abs(arr(W) - arr(W_r)) / arr(unit)
    assert err.max() <= 1.0 + 1e-3, f"{what}: a weight is {err.max():.3f} steps off"
    assert err.mean() <= 0.3, f"{what}: mean error {err.mean():.3f} steps"


def balanced_weights():
    """The balanced matrix of case_sinkhorn_balanced: every row and column std (nearly)
    equal, after 50 alternating normalisations."""
    rng = np.random.default_rng(SEED + 7)
    g = rng.normal(size=(32, 32))
    g = g - g.mean(axis=0, keepdims=True)
    for _ in range(50):
        g = g / g.std(axis=1, ddof=1, keepdims=True)
        g = g / g.std(axis=0, ddof=1, keepdims=True)
    return (0.05 * g).astype(np.float32)
