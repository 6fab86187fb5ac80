"""Helpers shared by the eqm checks: closed forms of the paper, written independently of the code."""
import numpy as np

A = 0.8        # truncation point a of the decay c(gamma)
LAM = 4.0      # gradient multiplier lambda


def c_gamma(t):
    """lambda * c_trunc(gamma): 1 up to a, then linear down to 0 at gamma = 1."""
    t = np.asarray(t, dtype=np.float64)
    return LAM * np.where(t <= A, 1.0, (1.0 - t) / (1.0 - A))


def c_over_one_minus(t):
    """c(gamma) / (1 - gamma), well conditioned near gamma = 1."""
    t = np.asarray(t, dtype=np.float64)
    return LAM * np.where(t <= A, 1.0 / np.maximum(1.0 - t, 1e-12), 1.0 / (1.0 - A))


def gd_numpy(field, z, eta, updates):
    x = z.copy()
    for _ in range(updates):
        x = x + eta * field(x)
    return x


def nag_numpy(field, z, eta, mu, updates):
    """x_{k+1} = x_k + eta f(x_k + mu (x_k - x_{k-1})), x_{-1} = x_0 (f = -grad E)."""
    x_prev, x = z.copy(), z.copy()
    for _ in range(updates):
        look = x + mu * (x - x_prev)
        x_prev, x = x, x + eta * field(look)
    return x


def close_to_one_of(actual, candidates, rtol, atol):
    return any(np.allclose(actual, c, rtol=rtol, atol=atol) for c in candidates)
