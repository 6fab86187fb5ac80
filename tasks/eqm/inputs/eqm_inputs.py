"""Seeded inputs shared by the cases and the checks of the eqm task (never shown to a model)."""
import os

import numpy as np


def seed():
    return int(os.environ.get("RCB_SEED", "0"))


# a 2-D Gaussian mixture with four modes: its score field has its minima (of -log p) near the modes
MODES = np.array([[2.0, 0.0], [-2.0, 0.0], [0.0, 2.0], [0.0, -2.0]])
MODE_STD = 0.3


def gmm_score(x):
    """grad log p(x) of the equal-weight mixture of N(MODES[k], MODE_STD^2 I); x: (n, 2) float64."""
    d = x[:, None, :] - MODES[None, :, :]                     # (n, K, 2)
    logw = -0.5 * np.sum(d ** 2, axis=-1) / MODE_STD ** 2      # (n, K)
    logw -= logw.max(axis=1, keepdims=True)
    w = np.exp(logw)
    w /= w.sum(axis=1, keepdims=True)
    return -np.sum(w[:, :, None] * d, axis=1) / MODE_STD ** 2


def gmm_start():
    rng = np.random.default_rng(seed() + 11)
    return rng.normal(size=(48, 2)) * 1.5


def quadratic_problem():
    """A separable quadratic energy E(x) = sum k (x - c)^2 / 2: the field -grad E = -k (x - c)."""
    rng = np.random.default_rng(seed() + 13)
    c = rng.normal(size=(5, 3))
    k = rng.uniform(0.5, 3.0, size=(5, 3))
    z = rng.normal(size=(5, 3)) * 2.0
    return c, k, z


def quadratic_field(x, c, k):
    return -k * (x - c)


def training_data():
    rng = np.random.default_rng(seed() + 17)
    return rng.normal(size=(256, 2, 4, 4)).astype(np.float32) * 0.8 + 0.5


def training_model_np(x):
    """The fixed 'network' the training case uses (no parameters, no time input)."""
    return np.tanh(x) + 0.1 * x


def decay_levels():
    rng = np.random.default_rng(seed() + 19)
    fixed = np.array([0.0, 0.1, 0.5, 0.79, 0.8, 0.81, 0.9, 0.95, 0.999, 1.0])
    return np.concatenate([fixed, rng.uniform(0.0, 1.0, size=30)]).astype(np.float32)


def energy_input():
    rng = np.random.default_rng(seed() + 23)
    x = rng.normal(size=(3, 4, 4, 4))
    v = rng.normal(size=(3, 4, 4, 4))
    return x, v


def sampler_eqm_input():
    rng = np.random.default_rng(seed() + 29)
    z = rng.normal(size=(3, 4, 4, 4)).astype(np.float32)
    y = rng.integers(0, 1000, size=3)
    return z, y
