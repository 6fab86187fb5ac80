"""Square-root (CIR) variance and the Heston model simulated through the
integrated variance, which is drawn from an Inverse Gaussian law (iVi scheme).

Variance:   dV_t = (a - b V_t) dt + c sqrt(V_t) dW_t
Integrated: U_t = int_0^t V_s ds,   Z_t = int_0^t sqrt(V_s) dW_s
Heston:     dS_t = r S_t dt + S_t sqrt(V_t) (rho dW_t + sqrt(1 - rho^2) dW^perp_t)
"""

from __future__ import annotations

import numpy as np


def ig_parameters(v: np.ndarray, a: float, b: float, c: float, dt: float) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The level alpha_i, and the mean and shape of the Inverse Gaussian law of dU_i.

    Args:
        v: current variance V_{t_i} (array, >= 0).
        a, b, c: coefficients of dV = (a - b V) dt + c sqrt(V) dW (a > 0, c > 0).
        dt: step length.

    Returns:
        (alpha, mean, shape) with dU_i ~ IG(mean, shape).
    """
    v = np.asarray(v, dtype=float)
    # <paper2code name="first passage level">
    alpha = dt * (v + a * dt)
    # </paper2code name="first passage level">
    # <paper2code name="inverse gaussian parameters">
    mean = alpha / (1.0 + b * dt)
    shape = (alpha / (c * dt)) ** 2
    # </paper2code name="inverse gaussian parameters">
    return alpha, mean, shape


def ivi_step(
    v: np.ndarray, a: float, b: float, c: float, dt: float, rng: np.random.Generator
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """One step of the scheme from V_{t_i} = v.

    Returns:
        (v_next, dU, dZ): V_{t_{i+1}}, the integrated variance increment
        U_{t_{i+1}} - U_{t_i}, and the martingale increment Z_{t_{i+1}} - Z_{t_i}.
    """
    v = np.asarray(v, dtype=float)
    # <paper2code name="ivi step">
    # <paper2code name="sample integrated variance">
    alpha, mean, shape = ig_parameters(v, a, b, c, dt)
    dU = rng.wald(mean, shape)
    # </paper2code name="sample integrated variance">
    # <paper2code name="recover martingale increment">
    dZ = ((1.0 + b * dt) * dU - alpha) / (c * dt)
    # </paper2code name="recover martingale increment">
    # <paper2code name="variance update">
    v_next = np.maximum(v + a * dt - b * dU + c * dZ, 0.0)
    # </paper2code name="variance update">
    # </paper2code name="ivi step">
    return v_next, dU, dZ


def simulate_square_root(
    v0: float, a: float, b: float, c: float, T: float, n_steps: int, n_paths: int, rng: np.random.Generator
) -> tuple[np.ndarray, np.ndarray]:
    """Paths of V and of U on the uniform grid t_i = i T / n_steps.

    Returns:
        (V, U), each of shape (n_paths, n_steps + 1), with V[:, 0] = v0 and U[:, 0] = 0.
    """
    # <paper2code name="simulate square-root process">
    dt = T / n_steps
    V = np.zeros((n_paths, n_steps + 1))
    U = np.zeros((n_paths, n_steps + 1))
    V[:, 0] = v0
    for i in range(n_steps):
        V[:, i + 1], dU, _ = ivi_step(V[:, i], a, b, c, dt, rng)
        U[:, i + 1] = U[:, i] + dU
    # </paper2code name="simulate square-root process">
    return V, U


def heston_log_step(
    log_s: np.ndarray,
    r: float,
    rho: float,
    a: float,
    b: float,
    c: float,
    dt: float,
    v: np.ndarray,
    v_next: np.ndarray,
    dU: np.ndarray,
    z: np.ndarray,
) -> np.ndarray:
    """log S_{t_{i+1}} given log S_{t_i}, the variance step v -> v_next with its
    integrated variance increment dU, and an independent standard normal draw z."""
    # <paper2code name="log-price step">
    dZ = (v_next - v - a * dt + b * dU) / c
    return log_s + r * dt - 0.5 * dU + rho * dZ + np.sqrt(1.0 - rho**2) * np.sqrt(dU) * z
    # </paper2code name="log-price step">


def simulate_heston(
    s0: float,
    v0: float,
    kappa: float,
    theta: float,
    sigma: float,
    rho: float,
    r: float,
    T: float,
    n_steps: int,
    n_paths: int,
    rng: np.random.Generator,
) -> tuple[np.ndarray, np.ndarray]:
    """Heston paths with dV = kappa (theta - V) dt + sigma sqrt(V) dW.

    Returns:
        (S, V), each of shape (n_paths, n_steps + 1), with S[:, 0] = s0, V[:, 0] = v0.
    """
    # <paper2code name="simulate heston">
    dt = T / n_steps
    a, b, c = kappa * theta, kappa, sigma
    S = np.zeros((n_paths, n_steps + 1))
    V = np.zeros((n_paths, n_steps + 1))
    log_s = np.full(n_paths, np.log(s0))
    S[:, 0] = s0
    V[:, 0] = v0
    for i in range(n_steps):
        V[:, i + 1], dU, _ = ivi_step(V[:, i], a, b, c, dt, rng)
        log_s = heston_log_step(log_s, r, rho, a, b, c, dt, V[:, i], V[:, i + 1], dU, rng.standard_normal(n_paths))
        S[:, i + 1] = np.exp(log_s)
    # </paper2code name="simulate heston">
    return S, V


def call_price(s_T: np.ndarray, strike: float, r: float, T: float) -> float:
    """Monte Carlo price of a European call from samples of S_T."""
    # <paper2code name="monte carlo call price">
    payoff = np.maximum(s_T - strike, 0.0)
    return float(np.exp(-r * T) * payoff.mean())
    # </paper2code name="monte carlo call price">


def expected_variance(v0: float, a: float, b: float, t: float | np.ndarray) -> np.ndarray:
    """E[V_t] for the square-root process (b > 0)."""
    # <paper2code name="expected variance">
    t = np.asarray(t, dtype=float)
    return a / b + (v0 - a / b) * np.exp(-b * t)
    # </paper2code name="expected variance">


def expected_integrated_variance(v0: float, a: float, b: float, t: float | np.ndarray) -> np.ndarray:
    """E[U_t] = E[int_0^t V_s ds] for the square-root process (b > 0)."""
    # <paper2code name="expected integrated variance">
    t = np.asarray(t, dtype=float)
    return a / b * t + (v0 - a / b) * (1.0 - np.exp(-b * t)) / b
    # </paper2code name="expected integrated variance">


def variance_of_variance(v0: float, a: float, b: float, c: float, t: float | np.ndarray) -> np.ndarray:
    """Var[V_t] for the square-root process (b > 0)."""
    # <paper2code name="variance of the variance">
    t = np.asarray(t, dtype=float)
    e = np.exp(-b * t)
    return v0 * c**2 / b * (e - e**2) + a * c**2 / (2.0 * b**2) * (1.0 - e) ** 2
    # </paper2code name="variance of the variance">
