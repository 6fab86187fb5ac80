"""Seeded inputs for the JSINDy cases and checks.

The cases and the checks both import this file (inputs/ is on the path in both
sandboxes): the checks regenerate the noisy observations, the partial-observation
directions and the random parameters from the same seeds instead of reading them
back from what the cases returned. RCB_SEED (set alike in both sandboxes; 0 when
grading) varies every random input; rcb validate runs several seeds.
"""

import os

import numpy as np
from scipy.integrate import solve_ivp

SEED = int(os.environ.get("RCB_SEED", "0"))

# Lotka-Volterra (the paper's example and parameters) on [0, T_END], N_OBS noisy samples
T_END, N_OBS, N_COLLOC, NOISE = 10.0, 21, 30, 0.1
NUM_STATE_PARAMS = 2 * 2 * N_COLLOC  # system dimension x derivative orders (0, 1) x basis points
NUM_FEATURES = 6  # degree-2 polynomials in two variables
STATE_FIT_LAM = 1e-2  # the regularization the state-fit case passes explicitly
DEFAULT_FIT_LAM = 1e-4  # get_fitted_params's default (its signature is visible)


def lotka_volterra(t, s):
    x, y = s
    return [1.1 * x - 0.4 * x * y, -0.4 * y + 0.1 * x * y]


def problem():
    """Times, the true states, noisy observations of them, and unit directions v_i
    for partial observations y_i = <v_i, x_i>."""
    t = np.linspace(0.0, T_END, N_OBS)
    sol = solve_ivp(lotka_volterra, (0.0, T_END), [10.0, 5.0], t_eval=t, rtol=1e-10, atol=1e-10)
    x_true = sol.y.T
    x = x_true + NOISE * np.random.default_rng(SEED + 1).standard_normal(x_true.shape)
    v = np.random.default_rng(SEED + 2).standard_normal((N_OBS, 2))
    v = v / np.linalg.norm(v, axis=1, keepdims=True)
    return t, x_true, x, v


def random_params():
    """A random state parameter vector z and coefficient matrix theta (features x states)."""
    g = np.random.default_rng(SEED + 3)
    return g.standard_normal(NUM_STATE_PARAMS), 0.3 * g.standard_normal((NUM_FEATURES, 2))


def second_order_theta():
    """Coefficients of a second-order ODE x'' = Theta(x, x') theta (degree-1 library: 5 features)."""
    return 0.2 * np.random.default_rng(SEED + 4).standard_normal((5, 2))


def row_block_diag(v):
    """Row i holds v[i] in the columns of observation i (states flattened row-major)."""
    n, d = v.shape
    out = np.zeros((n, n * d))
    for i in range(n):
        out[i, i * d : (i + 1) * d] = v[i]
    return out
