"""Closed forms shared by the Muon tests: on a diagonal (or orthogonal) matrix the
Newton-Schulz iteration acts on each singular value by the scalar quintic
p(x) = a x + b x^3 + c x^5, so every expected update is worked out with scalars."""

import numpy as np

A_, B_, C_ = 3.4445, -4.7750, 2.0315


NS_EPS = 1e-7  # the Frobenius pre-normalisation divides by ||G||_F + 1e-7
TOL = dict(rtol=1e-6, atol=1e-8)


def unit(d):
    """Entries of a diagonal matrix after Frobenius pre-normalisation."""
    d = np.asarray(d, dtype=float)
    return d / (np.linalg.norm(d) + NS_EPS)


def p5(x, steps=5):
    """The scalar Newton-Schulz quintic applied `steps` times."""
    x = np.asarray(x, dtype=float)
    for _ in range(steps):
        x = A_ * x + B_ * x**3 + C_ * x**5
    return x


def rect_diag(values, shape):
    out = np.zeros(shape)
    for k, v in enumerate(values):
        out[k, k] = v
    return out


def random_orthogonal(n, seed):
    q, _ = np.linalg.qr(np.random.default_rng(seed).normal(size=(n, n)))
    return q
