"""Seeded material fields shared by the cases and the checks (never shown to a model).

Seeds come from RCB_SEED (0 when grading) plus a fixed offset per field.
"""

import os

import numpy as np


def seed(offset):
    return int(os.environ.get("RCB_SEED", "0")) + offset


def random_smooth_phase(n, contrast, offset):
    """A smooth random field on an n x n periodic grid, log-uniform between contrast and 1:
    white noise low-passed in Fourier space (Gaussian, a few pixels wide), scaled to
    [0, 1] and used as the exponent of contrast; the same value at both quadrature points.
    Returned with shape (2, n, n), as the notebook's `phase`."""
    rng = np.random.default_rng(seed(offset))
    noise = rng.standard_normal((n, n))
    k = np.fft.fftfreq(n) * n
    filt = np.exp(-(k[:, None] ** 2 + k[None, :] ** 2) / (2 * 2.0**2))
    s = np.real(np.fft.ifft2(np.fft.fft2(noise) * filt))
    s = (s - s.min()) / (s.max() - s.min())
    field = contrast**s
    return np.stack([field, field])


def random_sharp_phase(n, contrast, offset):
    """The same field thresholded at its median exponent: two phases, 1 and contrast."""
    phase = random_smooth_phase(n, contrast, offset)
    return np.where(np.log(phase) / np.log(contrast) > 0.5, contrast, 1.0)


def random_vectors(n, count, offset):
    """count standard normal vectors of length n * n (one scalar dof per node)."""
    rng = np.random.default_rng(seed(offset))
    return rng.standard_normal((count, n * n))
