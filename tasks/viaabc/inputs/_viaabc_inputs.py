"""Seeded inputs shared by the cases and the checks (never shown to the model).

A toy inference problem stands in for the paper's trained ViT/MAE: two decay rates
theta = (a, b) under a uniform prior on [0, 3]^2, a closed-form "simulator"
y(t) = (exp(-a t), exp(-b t)) on eight time points, and a fixed analytic "encoder"
that maps each time point to a 6-dimensional token, tanh(y_t W + c) (no training).
The observation is the simulation at THETA_TRUE, so the ABC posterior must
concentrate around THETA_TRUE as the tolerance shrinks.
"""

import os

import numpy as np

SEED = int(os.environ.get("RCB_SEED", "0"))

TIMES = np.linspace(0.1, 2.0, 8)
LOWER = np.array([0.0, 0.0])
UPPER = np.array([3.0, 3.0])
THETA_TRUE = np.array([1.2, 0.6])

_enc = np.random.default_rng(7)
ENC_W = 4.0 * _enc.normal(size=(2, 6))
ENC_C = _enc.normal(scale=0.3, size=6)


def trajectory(theta):
    """T x 2 closed-form simulation for theta = (a, b)."""
    a, b = np.asarray(theta, dtype=float).reshape(-1)[:2]
    return np.stack([np.exp(-a * TIMES), np.exp(-b * TIMES)], axis=1)


def encode(y):
    """(1, T, 6) tokens of one T x 2 trajectory (float64 version of the stand-in encoder)."""
    return np.tanh(np.asarray(y, dtype=float) @ ENC_W + ENC_C)[None]


def token_cosine_distance(theta):
    """1 - mean over time tokens of the cosine between simulated and observed tokens."""
    x = encode(trajectory(THETA_TRUE))[0]
    y = encode(trajectory(theta))[0]
    cos = np.sum(x * y, axis=-1) / (np.linalg.norm(x, axis=-1) * np.linalg.norm(y, axis=-1))
    return 1.0 - cos.mean()


def in_prior(theta):
    theta = np.atleast_2d(theta)
    return np.all((theta >= LOWER) & (theta <= UPPER), axis=1)


def token_arrays(offset=0):
    """Random token arrays for the metric cases."""
    rng = np.random.default_rng(SEED + 11 + offset)
    return {
        "x3": rng.normal(size=(1, 9, 5)),
        "y3": rng.normal(size=(1, 9, 5)),
        "x2": rng.normal(size=(6, 4)),
        "y2": rng.normal(size=(8, 4)),
        "yb": rng.normal(size=(3, 8, 4)),
    }


def quantile_inputs():
    rng = np.random.default_rng(SEED + 21)
    x = rng.normal(size=31)
    w = rng.gamma(0.7, size=31)
    return x, w, [0.0, 0.03, 0.25, 0.5, 0.77, 0.999, 1.0]


def population(offset, n=40, spread=0.25, skew=1.0):
    """A weighted particle population around THETA_TRUE inside the prior box.

    Returns particles (n, 2), normalised weights (n,), the diagonal kernel
    variances 2 * var (as the code's 'meta' cov) and sigma_max.
    """
    rng = np.random.default_rng(SEED + 31 + offset)
    particles = THETA_TRUE + spread * rng.normal(size=(n, 2))
    particles = np.clip(particles, LOWER + 0.02, UPPER - 0.02)
    weights = rng.gamma(skew, size=n)
    weights = weights / weights.sum()
    mean = weights @ particles
    v1, v2 = weights.sum(), np.sum(weights ** 2)
    var = weights @ (particles - mean) ** 2 / (v1 - v2 / v1)
    return particles, weights, 2 * var, float(np.min(np.sqrt(var)))


def boundary_population():
    """Few particles near the prior's lower corner with very unequal weights."""
    rng = np.random.default_rng(SEED + 41)
    particles = np.array([[0.1, 0.15], [0.3, 2.8], [1.5, 1.5], [2.7, 0.2], [0.05, 0.05]])
    particles = particles + 0.02 * rng.uniform(size=particles.shape)
    weights = np.array([0.5, 0.05, 0.1, 0.05, 0.3])
    cov = np.array([0.04, 0.09])
    return particles, weights, cov


def generation_inputs():
    """Previous population and tolerance for one PMC generation."""
    particles, weights, cov, _ = population(1, n=30, spread=0.3)
    d = np.array([token_cosine_distance(p) for p in particles])
    epsilon = float(np.quantile(d, 0.5))
    return particles, weights, cov, epsilon


def process_inputs():
    """Previous and new populations, distances and the previous sigma_max."""
    prev, prev_w, _, prev_sigma_max = population(2, n=40, spread=0.35)
    new, new_w, _, _ = population(3, n=40, spread=0.2, skew=2.0)
    rng = np.random.default_rng(SEED + 51)
    new_w = new_w * rng.uniform(0.5, 3.0, size=new_w.shape)  # unnormalised
    distances = np.array([token_cosine_distance(p) for p in new])
    return prev, prev_w, prev_sigma_max, new, new_w, distances


def collapsed_inputs():
    """A wide previous population and a new one collapsed near THETA_TRUE."""
    prev, prev_w, _, prev_sigma_max = population(4, n=40, spread=0.8)
    new, new_w, _, _ = population(5, n=40, spread=0.03)
    distances = np.array([token_cosine_distance(p) for p in new])
    return prev, prev_w, prev_sigma_max, new, new_w, distances
