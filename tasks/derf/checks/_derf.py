"""Helpers the Derf checks share: comparisons and the closed forms of Derf."""

import math

import numpy as np

_erf = np.vectorize(math.erf, otypes=[float])


def arr(v):
    return np.asarray(v, dtype=float)


def close(got, want, rtol, atol_rel=0.0, atol=0.0, what="value"):
    """|got - want| <= atol + atol_rel * max|want| + rtol * |want|, elementwise."""
    got, want = arr(got), arr(want)
    assert got.shape == want.shape, f"{what}: shape {got.shape}, expected {want.shape}"
    tol = atol + atol_rel * float(np.max(np.abs(want), initial=0.0)) + rtol * np.abs(want)
    err = np.abs(got - want)
    assert np.all(np.isfinite(got)), f"{what}: not finite"
    assert np.all(err <= tol), f"{what}: max error {float(np.max(err - tol + tol)):.3g} (tolerance {float(np.max(tol)):.3g})"


def derf(x, alpha, shift, weight, bias, channels_last):
    """gamma * erf(alpha * x + s) + beta in float64; weight and bias per channel, on the
    last axis (channels last) or on axis 1 (channels first, NCHW)."""
    z = float(alpha) * arr(x) + float(shift)
    w, b = arr(weight), arr(bias)
    if not channels_last:
        w, b = w[:, None, None], b[:, None, None]
    return _erf(z) * w + b, z, w


def derf_grads(x, alpha, shift, weight, bias, g, channels_last):
    """Gradients of sum(g * Derf(x)) for alpha, shift, weight, bias and x."""
    y, z, w = derf(x, alpha, shift, weight, bias, channels_last)
    g = arr(g)
    d = g * w * (2.0 / math.sqrt(math.pi)) * np.exp(-z * z)  # d loss / d z
    axes = tuple(i for i in range(arr(x).ndim) if i != (arr(x).ndim - 1 if channels_last else 1))
    return {
        "grad_alpha": np.array([np.sum(d * arr(x))]),
        "grad_shift": np.array([np.sum(d)]),
        "grad_weight": np.sum(g * _erf(z), axis=axes),
        "grad_bias": np.sum(g, axis=axes),
        "grad_x": d * float(alpha),
    }
