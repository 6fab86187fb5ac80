"""Independent values for the hj-gauss checks (numpy only, float64): Gaussian expectations
of w = exp(-c g(y)), y ~ N(x, s^2 I), in closed form for g(y) = |y|^2 and g(y) = a.y + b,
and by quadrature for the disc target g(y) = |y| - R; with them, the value and gradient the
estimators target and the Monte-Carlo standard deviations of the estimators with N samples
(the delta method for log-mean-exp and for self-normalised importance weights)."""

import numpy as np

# float32 work in the estimators (a log of a mean of exponentials, then times 1/c):
# reorderings move a value by ~1e-6 relative; the reference comparisons allow 1e-4.
REF_RTOL = 1e-4
REF_ATOL = 1e-4
N_SD = 6.0  # a correct estimator is off by more than 6 sd with probability ~2e-9 per value


def close_to_reference(out, ref, rtol=REF_RTOL, atol=REF_ATOL, what=""):
    out, ref = np.asarray(out, dtype=float), np.asarray(ref, dtype=float)
    assert out.shape == ref.shape, f"{what}: shape {out.shape} != reference {ref.shape}"
    np.testing.assert_allclose(out, ref, rtol=rtol, atol=atol * max(1.0, np.max(np.abs(ref))),
                               err_msg=what)


def quad_moments(x, s2, c):
    """E[w], E[w^2] for g = |y|^2 (x of shape (n,))."""
    n = x.shape[0]
    r2 = float(x @ x)

    def m(k):
        return (1 + 2 * k * s2) ** (-n / 2) * np.exp(-k * r2 / (1 + 2 * k * s2))

    return m(c), m(2 * c)


def quad_value(x, s2, c):
    n = x.shape[0]
    return n / (2 * c) * np.log1p(2 * c * s2) + float(x @ x) / (1 + 2 * c * s2)


def value_sd(Ew, Ew2, c, N):
    return np.sqrt(max(Ew2 / Ew ** 2 - 1.0, 0.0) / N) / c


def quad_value_sd(x, s2, c, N):
    """sd of -(1/c) log(mean w) for g = |y|^2; for c -> 0 it tends to sd(g) / sqrt(N)."""
    n = x.shape[0]
    r2 = float(x @ x)
    if c < 1e-3:  # the ratio below cancels: use its limit c^2 Var(g)
        var_g = 2 * n * s2 ** 2 + 4 * s2 * r2
        return np.sqrt(var_g / N)
    Ew, Ew2 = quad_moments(x, s2, c)
    return value_sd(Ew, Ew2, c, N)


def linear_value(x, a, b, s2, c):
    return float(a @ x) + b - 0.5 * c * s2 * float(a @ a)


def linear_value_sd(a, s2, c, N):
    return np.sqrt(np.expm1(c ** 2 * s2 * float(a @ a)) / N) / c


def gauss_grid(s2, half_width=8.0, nodes=801):
    """Nodes and weights of N(0, s^2 I_2) on a tensor trapezoid grid."""
    z = np.linspace(-half_width, half_width, nodes)
    w1 = np.exp(-0.5 * z ** 2)
    w1 /= w1.sum()
    Z1, Z2 = np.meshgrid(z, z, indexing="ij")
    W = np.outer(w1, w1)
    return np.sqrt(s2) * np.stack([Z1.ravel(), Z2.ravel()], -1), W.ravel()


def weighted_stats(x, s2, c, g, grad_g=None, grid=None):
    """By quadrature (2-D): the value -(1/c) log E[w], its sd per sample, the b17 and the
    autodiff gradient targets and their per-sample sds (divide by sqrt(N))."""
    offs, W = grid if grid is not None else gauss_grid(s2)
    y = x[None, :] + offs
    gv = g(y)
    e = -c * gv
    emax = e.max()
    w = np.exp(e - emax)
    Ew = W @ w
    Ew2 = W @ w ** 2
    value = -(emax + np.log(Ew)) / c
    val_sd = np.sqrt(max(Ew2 / Ew ** 2 - 1, 0)) / c
    mu = (W * w) @ y / Ew
    grad_b17 = (x - mu) / (c * s2)
    sd_b17 = np.sqrt((W * w ** 2) @ (y - mu) ** 2 / Ew ** 2) / (c * s2)
    out = {"value": value, "value_sd": val_sd, "b17": grad_b17, "b17_sd": sd_b17}
    if grad_g is not None:
        G = grad_g(y)
        m = (W * w) @ G / Ew
        out["autodiff"] = m
        out["autodiff_sd"] = np.sqrt((W * w ** 2) @ (G - m) ** 2 / Ew ** 2)
    return out


def disc_cost(R):
    return lambda y: np.linalg.norm(y, axis=-1) - R
