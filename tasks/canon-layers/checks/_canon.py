"""Helpers for the Canon-layer checks: float64 numpy, no code under test."""

import numpy as np


def arr(v):
    return np.asarray(v, dtype=np.float64)


def silu(x):
    return x / (1.0 + np.exp(-x))


def causal_conv(x, w):
    """Depthwise causal convolution, x (B, T, D), w (D, K): y_t = sum_k w[:, k] x_{t-K+1+k},
    with zeros before the start of the sequence."""
    B, T, D = x.shape
    K = w.shape[1]
    xp = np.concatenate([np.zeros((B, K - 1, D)), x], axis=1)
    y = np.zeros_like(x)
    for k in range(K):
        y += xp[:, k:k + T, :] * w[:, k]
    return y


def canon_layer(x, w, act, res):
    """The Canon layer on x: the causal convolution, SiLU if act, plus x if res."""
    y = causal_conv(x, w)
    if act:
        y = silu(y)
    return x + y if res else y


def close(a, b, rtol=1e-9, atol=1e-10):
    a, b = arr(a), arr(b)
    assert a.shape == b.shape, (a.shape, b.shape)
    np.testing.assert_allclose(a, b, rtol=rtol, atol=atol)
