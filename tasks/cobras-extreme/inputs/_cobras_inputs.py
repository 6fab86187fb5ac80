"""The cases' inputs, drawn from RCB_SEED. cases/cases_cobras.py feeds them to the code
under test, and the checks regenerate them from the seed with the same builders (they
never read an input back from what the cases returned)."""

import os

import numpy as np

SEED = int(os.environ.get("RCB_SEED", "0"))


def rng(offset):
    return np.random.default_rng(SEED + offset)


def snapshots_and_gradients():
    """Snapshots near a 5-dimensional subspace and gradients near another, in R^12."""
    g = rng(1)
    n = 12
    basis_x = g.normal(size=(5, n))
    basis_g = g.normal(size=(5, n))
    x = g.normal(size=(30, 5)) @ basis_x + 0.01 * g.normal(size=(30, n))
    grads = g.normal(size=(20, 5)) @ basis_g + 0.01 * g.normal(size=(20, n))
    return x, grads


def factorization_inputs(n_samples):
    g = rng(2)
    grads = g.normal(size=(n_samples, 3, 3, 3))
    snaps = g.normal(size=(7, 3, 3))
    return grads, snaps


def recon_inputs():
    g = rng(3)
    tens = g.uniform(size=(4, 16))
    z = g.normal(size=(5, 4, 6))
    phi = g.normal(size=(4, 16, 6)) + 1j * g.normal(size=(4, 16, 6))
    return tens, z, phi


def frame_inputs():
    g = rng(4)
    n, length = 64, 32 * np.pi
    x = np.linspace(0, length, n, endpoint=False)
    amp = g.uniform(0.5, 1.5, size=(5, 1))
    where = g.uniform(0.3, 0.7, size=(5, 1)) * length
    snaps = amp * np.exp(-((x - where) ** 2) / 20.0) * np.exp(1j * x)
    return x, length / n, snaps


def modes_inputs():
    g = rng(5)
    n, r, dx = 32, 3, 0.5
    modes = g.normal(size=(2 * n, r))
    u = g.normal(size=n) + 1j * g.normal(size=n)
    centers = dx * np.array([16, 0, 5, 31, 20])
    batch = g.normal(size=(2, 3, n)) + 1j * g.normal(size=(2, 3, n))
    return modes, u, centers, dx, batch


def svm_inputs(d=3, n_sv=15):
    g = rng(6)
    sv = g.normal(size=(n_sv, d))
    dual = g.normal(size=n_sv)
    gamma = 0.7
    b = 0.1
    s_mean = g.normal(size=d)
    s_scale = g.uniform(0.5, 2.0, size=d)
    points = s_mean + s_scale * g.normal(size=(20, d))
    return sv, s_mean, s_scale, gamma, dual, b, points


def control_inputs():
    """A state, local modes, Phi at the centre, and a classifier (support vectors, zero
    mean, scale 2, gamma 0.3, dual coefficients, intercept) whose intercept puts half of
    the positions on the event side."""
    g = rng(7)
    n, r = 32, 3
    state = g.normal(size=n) + 1j * g.normal(size=n)
    psi = np.exp(-((np.arange(n) - n / 2) ** 2) / 8.0)[:, None, None] * g.normal(size=(n, r, 2))
    phi0 = g.normal(size=r) + 1j * g.normal(size=r)
    sv, dual = g.normal(size=(15, r)), g.normal(size=15)
    # the local coordinates the control computes (see checks/test_cobras.py::local_features)
    u = np.stack([state.real, state.imag], axis=-1)
    idx = (np.arange(n)[:, None] - np.arange(n)[None, :] - 1) % n
    z = np.einsum("yj,nyrj->nr", u, psi[idx]) / 2.0
    raw = (np.exp(-0.3 * ((z[:, None, :] - sv[None]) ** 2).sum(-1)) * dual).sum(1)
    svm = (sv, np.zeros(r), 2.0 * np.ones(r), 0.3, dual, -float(np.median(raw)))
    return state, psi, phi0, svm


def qoi_inputs():
    g = rng(8)
    n_t, n_x = 6, 128
    length = 40.0
    x = np.linspace(0, length, n_x, endpoint=False)
    traj = g.normal(size=(n_t, n_x)) + 1j * g.normal(size=(n_t, n_x))
    return traj, x, np.arange(n_t, dtype=float), 0.5, 1.5, 15.0, length / n_x


def quantile_inputs():
    """n_quantiles + 1 sorted bin edges and values strictly between the outer two."""
    g = rng(9)
    n_quantiles = 5
    edges = np.sort(g.normal(size=n_quantiles + 1))
    x = g.uniform(edges[0], edges[-1], size=100)
    return edges, n_quantiles, x
