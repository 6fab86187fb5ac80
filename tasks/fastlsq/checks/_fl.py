"""Shared by the checks: the cases' inputs regenerated from RCB_SEED, and the sinusoidal
features with their derivatives in closed form (numpy only, no FastLSQ code)."""

import os

import numpy as np

SEED = int(os.environ.get("RCB_SEED", "0"))


def features(seed, d, n, sigma):
    """W (d, n), b (1, n) and the generator, as the cases draw them."""
    rng = np.random.default_rng(seed)
    W = rng.normal(size=(d, n)) * sigma
    b = rng.uniform(0.0, 2 * np.pi, size=(1, n))
    return rng, W, b


def key(alpha):
    return ",".join(str(a) for a in alpha)


def derivative(x, W, b, alpha, normalize=True, dc_eps=1e-8):
    """D^alpha sin(W^T x + b) for every feature: prod_k W_k^alpha_k times the phase
    shifted by |alpha| quarter turns (d/dz sin z = sin(z + pi/2)); a negative alpha_k
    integrates along x_k, and features with |W_k| <= dc_eps there get zero."""
    Z = x @ W + b
    order = sum(alpha)
    pre = np.ones((1, W.shape[1]))
    for k, a in enumerate(alpha):
        if a == 0:
            continue
        Wk = W[k : k + 1]
        if a > 0:
            pre = pre * Wk**a
        else:
            safe = np.abs(Wk) > dc_eps
            pre = pre * np.where(safe, np.where(safe, Wk, 1.0) ** float(a), 0.0)
    scale = 1.0 / np.sqrt(W.shape[1]) if normalize else 1.0
    return pre * np.sin(Z + order * np.pi / 2) * scale


def close(actual, desired, rtol=1e-10, atol_rel=1e-12, what="value"):
    """``actual`` equals ``desired`` up to rounding: relative ``rtol``, plus an absolute
    floor of ``atol_rel`` times the largest entry (entries that nearly cancel)."""
    actual = np.asarray(actual, dtype=float)
    desired = np.asarray(desired, dtype=float)
    assert actual.shape == desired.shape, f"{what}: shape {actual.shape} != {desired.shape}"
    atol = atol_rel * max(1.0, float(np.max(np.abs(desired))))
    np.testing.assert_allclose(actual, desired, rtol=rtol, atol=atol, err_msg=what)


# ---- the Burgers problem of the cases -------------------------------------------------


def burgers_inputs(seed, n_feat, scale, n_pde):
    rng, W, b = features(seed, 1, n_feat, scale)
    x = rng.uniform(0.0, 1.0, size=(n_pde, 1))
    return rng, W, b, x


def burgers_source(x, nu):
    u = np.sin(2 * np.pi * x)
    ux = 2 * np.pi * np.cos(2 * np.pi * x)
    uxx = -((2 * np.pi) ** 2) * np.sin(2 * np.pi * x)
    return u * ux - nu * uxx


X_TEST = np.linspace(0.0, 1.0, 201)
U_EXACT = np.sin(2 * np.pi * X_TEST)
