"""Helpers the checks share: closed forms independent of the code under test."""

import numpy as np


def green_symbol(n):
    """Fourier symbol of the unit-conductivity stiffness on an n x n periodic grid of
    h = 1/n pixels, two linear triangles per pixel. The P1 stiffness on this mesh is the
    five-point stencil (4, -1, -1, -1, -1) (the 1/h^2 of the gradients and the h^2 of the
    pixel area cancel), so its symbol is 4 sin^2(pi k / n) + 4 sin^2(pi l / n)."""
    s = 4 * np.sin(np.pi * np.arange(n) / n) ** 2
    return s[:, None] + s[None, :]


def smooth_log10_interior(field):
    """The 3 x 3 binomial filter ((1, 2, 1) x (1, 2, 1) / 16) applied to log10(field) and
    exponentiated, on the interior pixels [1:-1, 1:-1] (where no boundary rule matters)."""
    lg = np.log10(field)
    w = {-1: 0.25, 0: 0.5, 1: 0.25}
    acc = np.zeros_like(lg)
    for dx, wx in w.items():
        for dy, wy in w.items():
            acc += wx * wy * np.roll(lg, (dx, dy), axis=(0, 1))
    return 10 ** acc[1:-1, 1:-1]


def iterations_close(n, n_ref):
    """PCG iteration counts agree up to max(3, 5%): a correct preconditioner built in
    another floating-point order changes the Krylov iterates by rounding only, which can
    move the stopping test by an iteration or two on these ill-conditioned systems."""
    return abs(n - n_ref) <= max(3, 0.05 * n_ref)


def centred(x):
    x = np.asarray(x, dtype=float)
    return x - x.mean()
