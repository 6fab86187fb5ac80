"""Ensemble Kalman inversion (EKI) and its variants, with Lorenz-96 time-averaged
statistics as the forward map.

Shapes: an ensemble of J parameter vectors is an array theta of shape (J, p);
the forward map G takes it to g of shape (J, m); data y has shape (m,) and the
noise covariance gamma shape (m, m).
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np


def lorenz96(x: np.ndarray, F: float | np.ndarray) -> np.ndarray:
    """dx_i/dt = (x_{i+1} - x_{i-2}) x_{i-1} - x_i + F, periodic in i (last axis)."""
    # <paper2code name="lorenz96 tendency">
    return (np.roll(x, -1, axis=-1) - np.roll(x, 2, axis=-1)) * np.roll(x, 1, axis=-1) - x + F
    # </paper2code name="lorenz96 tendency">


def rk4_step(f: Callable[[np.ndarray], np.ndarray], x: np.ndarray, dt: float) -> np.ndarray:
    """One classical fourth-order Runge-Kutta step of dx/dt = f(x)."""
    # <paper2code name="rk4 step">
    k1 = f(x)
    k2 = f(x + 0.5 * dt * k1)
    k3 = f(x + 0.5 * dt * k2)
    k4 = f(x + dt * k3)
    return x + dt / 6.0 * (k1 + 2.0 * k2 + 2.0 * k3 + k4)
    # </paper2code name="rk4 step">


def lorenz96_statistics(
    theta: np.ndarray, x0: np.ndarray, dt: float = 0.05, n_spinup: int = 100, n_steps: int = 400
) -> np.ndarray:
    """The forward map G(theta) for an ensemble of forcings.

    Args:
        theta: shape (J, 1), the forcing F of each member.
        x0: initial state, shape (N,), the same for every member.
        dt: RK4 step.
        n_spinup: steps discarded before averaging.
        n_steps: steps averaged (the states after steps n_spinup + 1, ..., n_spinup + n_steps).

    Returns:
        shape (J, 2): the time averages of the site mean of x and of x^2.
    """
    F = np.asarray(theta, dtype=float)[:, :1]
    # <paper2code name="time-averaged statistics">
    x = np.tile(np.asarray(x0, dtype=float), (F.shape[0], 1))

    def f(state):
        return lorenz96(state, F)

    for _ in range(n_spinup):
        x = rk4_step(f, x, dt)
    mean_x = np.zeros(F.shape[0])
    mean_x2 = np.zeros(F.shape[0])
    for _ in range(n_steps):
        x = rk4_step(f, x, dt)
        mean_x += x.mean(axis=1)
        mean_x2 += (x**2).mean(axis=1)
    return np.stack([mean_x / n_steps, mean_x2 / n_steps], axis=1)
    # </paper2code name="time-averaged statistics">


def ensemble_covariances(theta: np.ndarray, g: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Sample cross-covariance C^{θG} (p, m) and covariance C^{GG} (m, m), with 1/(J-1)."""
    # <paper2code name="ensemble covariances">
    J = theta.shape[0]
    d_theta = theta - theta.mean(axis=0)
    d_g = g - g.mean(axis=0)
    c_tg = d_theta.T @ d_g / (J - 1)
    c_gg = d_g.T @ d_g / (J - 1)
    # </paper2code name="ensemble covariances">
    return c_tg, c_gg


def eki_update(
    theta: np.ndarray,
    g: np.ndarray,
    y: np.ndarray,
    gamma: np.ndarray,
    h: float = 1.0,
    rng: np.random.Generator | None = None,
) -> np.ndarray:
    """One EKI iteration with step h.

    theta_j <- theta_j + C^{θG} (C^{GG} + Γ/h)^{-1} (y_j - G(theta_j)),
    with y_j = y + η_j, η_j ~ N(0, Γ/h) (perturbed observations) when rng is
    given, and y_j = y (deterministic EKI) when rng is None.
    """
    # <paper2code name="eki update">
    c_tg, c_gg = ensemble_covariances(theta, g)
    # <paper2code name="perturbed observations">
    if rng is None:
        y_j = np.broadcast_to(y, g.shape)
    else:
        chol = np.linalg.cholesky(gamma / h)
        y_j = y + rng.standard_normal(g.shape) @ chol.T
    # </paper2code name="perturbed observations">
    # <paper2code name="kalman gain step">
    increments = np.linalg.solve(c_gg + gamma / h, (y_j - g).T)
    return theta + (c_tg @ increments).T
    # </paper2code name="kalman gain step">
    # </paper2code name="eki update">


def data_misfit(g: np.ndarray, y: np.ndarray, gamma: np.ndarray) -> np.ndarray:
    """Φ_j = ½ (y - G_j)^T Γ^{-1} (y - G_j) for each member, shape (J,)."""
    # <paper2code name="data misfit">
    r = y - g
    return 0.5 * np.sum(r * np.linalg.solve(gamma, r.T).T, axis=1)
    # </paper2code name="data misfit">


def discrepancy_reached(g: np.ndarray, y: np.ndarray, gamma: np.ndarray, tau: float) -> bool:
    """Discrepancy principle on the ensemble mean prediction: ‖Γ^{-1/2}(y - mean_j G_j)‖ ≤ τ √m."""
    # <paper2code name="discrepancy principle">
    r = y - g.mean(axis=0)
    return bool(r @ np.linalg.solve(gamma, r) <= tau**2 * len(y))
    # </paper2code name="discrepancy principle">


def data_misfit_controller(phi: np.ndarray, m: int, t: float) -> float:
    """Adaptive step h_n from the members' misfits Φ_j, the data size m and the
    pseudo-time t already used; the steps add up to at most 1."""
    # <paper2code name="data misfit controller">
    h = max(m / (2.0 * np.mean(phi)), np.sqrt(m / (2.0 * np.var(phi))))
    return float(min(h, 1.0 - t))
    # </paper2code name="data misfit controller">


def tikhonov_augment(
    G: Callable[[np.ndarray], np.ndarray], m0: np.ndarray, c0: np.ndarray, y: np.ndarray, gamma: np.ndarray
) -> tuple[Callable[[np.ndarray], np.ndarray], np.ndarray, np.ndarray]:
    """Tikhonov EKI (TEKI): the augmented map θ ↦ [G(θ), θ], data [y, m0] and noise blockdiag(Γ, C0)."""
    # <paper2code name="tikhonov augmentation">
    m, p = len(y), len(m0)

    def G_aug(theta):
        return np.concatenate([G(theta), theta], axis=1)

    y_aug = np.concatenate([y, m0])
    gamma_aug = np.zeros((m + p, m + p))
    gamma_aug[:m, :m] = gamma
    gamma_aug[m:, m:] = c0
    # </paper2code name="tikhonov augmentation">
    return G_aug, y_aug, gamma_aug


def run_eki(
    G: Callable[[np.ndarray], np.ndarray],
    theta0: np.ndarray,
    y: np.ndarray,
    gamma: np.ndarray,
    n_iter: int,
    h: float = 1.0,
    rng: np.random.Generator | None = None,
    adaptive: bool = False,
    tau: float | None = None,
) -> tuple[np.ndarray, int]:
    """Iterate EKI from the ensemble theta0.

    Each iteration evaluates g = G(theta); it stops before updating when the
    discrepancy principle holds (tau not None). With adaptive=True the step is
    chosen by the data misfit controller and the run ends once the steps add up to 1.

    Returns:
        (theta, n_evals): the final ensemble and the number of forward-map calls.
    """
    # <paper2code name="run eki">
    theta = np.array(theta0, dtype=float)
    t = 0.0
    n_evals = 0
    for _ in range(n_iter):
        g = G(theta)
        n_evals += 1
        if tau is not None and discrepancy_reached(g, y, gamma, tau):
            break
        if adaptive:
            h = data_misfit_controller(data_misfit(g, y, gamma), len(y), t)
            t += h
        theta = eki_update(theta, g, y, gamma, h, rng)
        if adaptive and t >= 1.0 - 1e-12:
            break
    # </paper2code name="run eki">
    return theta, n_evals
