"""The cases' signals, regenerated from the same seeds (cases/cases_comd.py draws them the
same way), and the first iterations of the C-OMD scheme written out in numpy from the
paper's update equations, independently of the code under test."""

import os

import numpy as np

SEED = 1000 * int(os.environ.get("RCB_SEED", "0"))
FS = 1000.0
N = 1000


def rng(offset):
    return np.random.default_rng(SEED + offset)


def tones(offset, freqs, amps, n=N):
    t = np.arange(n) / FS
    phases = rng(offset).uniform(0.0, 2.0 * np.pi, size=len(freqs))
    return sum(a * np.cos(2.0 * np.pi * f * t + p) for f, a, p in zip(freqs, amps, phases))


def separated_signal():
    return tones(1, (2.0, 24.0, 288.0), (1.0, 0.25, 1.0 / 16.0))


def overlapping_signal():
    return tones(2, (8.0, 40.0, 52.0), (1.0, 0.6, 0.35))


def short_signal():
    g = rng(3)
    t = np.arange(48) / FS
    return np.cos(2 * np.pi * 60 * t + g.uniform(0, 6)) + 0.7 * np.cos(2 * np.pi * 110 * t) + 0.3 * g.standard_normal(48)


def dc_signal():
    return 0.8 + tones(4, (30.0, 200.0), (1.0, 0.5))


# The short runs' settings (cases/cases_comd.py SHORT): K = 3, alpha = 5e-4 (the default),
# beta = 2e-3, no mirror extension, initial centre frequencies drawn by the authors'
# init="random" with seed 7: sorted 0.5 * uniform draws.
K, ALPHA, BETA = 3, 5e-4, 2e-3


def initial_omega(dc=False):
    w = np.sort(0.5 * np.random.default_rng(7).random(K))
    if dc:
        w[0] = 0.0
    return w


def gram(V, dw):
    return (V @ V.conj().T) * dw


def orthogonalise(V, n_iters, dw, preserve_energy):
    """Eq. (17): normalise by the square root of the trace of the Gram matrix, then
    n_iters Newton-Schulz steps V <- (3/2 I - 1/2 G(V)) V; with preserve_energy, each
    mode gets its original norm back."""
    norms = np.sqrt(np.real(np.diag(gram(V, dw))))
    W = V / np.sqrt(np.real(np.trace(gram(V, dw))))
    for _ in range(n_iters):
        W = (1.5 * np.eye(len(V)) - 0.5 * gram(W, dw)) @ W
    if preserve_energy:
        W = W * (norms / np.sqrt(np.real(np.diag(gram(W, dw)))))[:, None]
    return W


def admm(f, n_iter, *, tau_lambda=0.0, tau_gamma=0.0, ns_iters=0, preserve_energy=True,
         jacobi=False, relax=1.0, dc=False):
    """n_iter iterations of the scheme on the analytic spectrum of f / ||f||.

    Returns the spectra sorted by final centre frequency, the sorted centre
    frequencies and the centre frequencies after each iteration (unsorted)."""
    f = f / np.linalg.norm(f)
    T = f.size
    freqs = np.arange(1, T + 1) / T - 0.5 - 1.0 / T
    dw = 1.0 / T
    pos = slice(T // 2, T)
    f_plus = np.fft.fftshift(np.fft.fft(f))
    f_plus[: T // 2] = 0.0
    u = np.zeros((K, T), dtype=complex)
    lam = np.zeros(T, dtype=complex)
    Gam = np.zeros((K, K))
    omega = initial_omega(dc)
    history = []
    for _ in range(n_iter):
        G = gram(u[:, pos], dw)
        new = np.zeros_like(u)
        for k in range(K):
            # Eq. (12): the other modes (latest values for Gauss-Seidel), the scaled
            # multiplier, and the orthogonality coupling (beta G_kj + Gamma_kj / 2) m_j
            current = u if jacobi else np.concatenate([new[:k], u[k:]])
            coupling = BETA * G[k] + 0.5 * Gam[k]
            coupling[k] = 0.0
            others = current.sum(axis=0) - current[k]
            A = f_plus - others + lam / (2.0 * ALPHA) - (coupling @ current) / ALPHA
            # Eq. (11): the Wiener filter around the mode's centre frequency
            new[k] = A / (1.0 + 2.0 * (freqs - omega[k]) ** 2 / ALPHA)
        new = (1.0 - relax) * u + relax * new
        new[:, : T // 2] = 0.0
        # Eq. (13): centre of gravity of the mode's power spectrum
        for k in range(K):
            power = np.abs(new[k, pos]) ** 2
            omega[k] = 0.0 if (dc and k == 0) else (freqs[pos] * power).sum() / power.sum()
        if ns_iters:
            new[:, pos] = orthogonalise(new[:, pos], ns_iters, dw, preserve_energy)
        # Eqs. (14), (15): dual ascent on the reconstruction and the off-diagonal Gram entries
        lam = lam + tau_lambda * (f_plus - new.sum(axis=0))
        lam[: T // 2] = 0.0
        Gn = np.real(gram(new[:, pos], dw))
        Gam = Gam + tau_gamma * (Gn - np.diag(np.diag(Gn)))
        u = new
        history.append(omega.copy())
    order = np.argsort(omega)
    return u[order], omega[order], np.array(history)
