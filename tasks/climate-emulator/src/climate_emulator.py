"""An interpretable climate emulator for economic models: a mass-conserving
three-reservoir carbon cycle, CO2 radiative forcing, a two-layer temperature
module, and pattern scaling from global to local temperature.

Reservoirs, in this order: atmosphere (AT), upper ocean and biosphere (UO),
deep ocean (LO); masses in GtC. Temperatures are anomalies in K:
(T_AT, T_OC) = (atmosphere and upper ocean, deep ocean). One step is dt years.
"""

from __future__ import annotations

import numpy as np


def transfer_matrix(b12: float, b23: float, m_eq: np.ndarray) -> np.ndarray:
    """The 3x3 matrix A of M_{t+1} = A M_t + e_t, from the two calibrated
    exchange rates b12 (AT -> UO) and b23 (UO -> LO) per step and the
    equilibrium masses m_eq = (M_AT, M_UO, M_LO).

    A[i, j] is the fraction of reservoir j's carbon that is in reservoir i one
    step later, so every column sums to one.
    """
    m_at, m_uo, m_lo = m_eq
    # <paper2code name="transfer matrix">
    b21 = b12 * m_at / m_uo
    b32 = b23 * m_uo / m_lo
    return np.array(
        [
            [1.0 - b12, b21, 0.0],
            [b12, 1.0 - b21 - b23, b32],
            [0.0, b23, 1.0 - b32],
        ]
    )
    # </paper2code name="transfer matrix">


def carbon_step(M: np.ndarray, A: np.ndarray, emissions: float, dt: float) -> np.ndarray:
    """M_{t+1} from M_t (GtC) with emissions (GtC per year) into the atmosphere."""
    # <paper2code name="carbon cycle step">
    e = np.array([emissions * dt, 0.0, 0.0])
    return A @ M + e
    # </paper2code name="carbon cycle step">


def radiative_forcing(m_at: float | np.ndarray, m_at_pre: float, f2x: float, f_ex: float | np.ndarray) -> np.ndarray:
    """F = F2x log2(M_AT / M_AT,pre) + F_EX in W m^-2."""
    # <paper2code name="radiative forcing">
    return f2x * np.log2(np.asarray(m_at) / m_at_pre) + f_ex
    # </paper2code name="radiative forcing">


def equilibrium_temperature(forcing: float, f2x: float, ecs: float) -> float:
    """Steady-state warming for constant forcing."""
    # <paper2code name="equilibrium temperature">
    return ecs * forcing / f2x
    # </paper2code name="equilibrium temperature">


def temperature_step(
    T: np.ndarray, forcing: float, c1: float, c3: float, c4: float, f2x: float, ecs: float
) -> np.ndarray:
    """(T_AT, T_OC) one step later, given the forcing of the new step."""
    t_at, t_oc = T
    # <paper2code name="temperature step">
    lam = f2x / ecs
    t_at_next = t_at + c1 * (forcing - lam * t_at - c3 * (t_at - t_oc))
    t_oc_next = t_oc + c4 * (t_at - t_oc)
    # </paper2code name="temperature step">
    return np.array([t_at_next, t_oc_next])


def simulate(
    emissions: np.ndarray,
    f_ex: np.ndarray,
    m0: np.ndarray,
    T0: np.ndarray,
    A: np.ndarray,
    dt: float,
    m_at_pre: float,
    f2x: float,
    ecs: float,
    c1: float,
    c3: float,
    c4: float,
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Run the emulator for n = len(emissions) steps.

    Args:
        emissions: shape (n,), GtC per year during step t.
        f_ex: shape (n + 1,), exogenous (non-CO2) forcing at t = 0..n.

    Returns:
        (M, F, T) with shapes (n + 1, 3), (n + 1,), (n + 1, 2).
    """
    n = len(emissions)
    # <paper2code name="simulate emulator">
    M = np.zeros((n + 1, 3))
    F = np.zeros(n + 1)
    T = np.zeros((n + 1, 2))
    M[0] = m0
    T[0] = T0
    F[0] = radiative_forcing(M[0, 0], m_at_pre, f2x, f_ex[0])
    for t in range(n):
        M[t + 1] = carbon_step(M[t], A, emissions[t], dt)
        F[t + 1] = radiative_forcing(M[t + 1, 0], m_at_pre, f2x, f_ex[t + 1])
        T[t + 1] = temperature_step(T[t], F[t + 1], c1, c3, c4, f2x, ecs)
    # </paper2code name="simulate emulator">
    return M, F, T


def carbon_timescales(A: np.ndarray, dt: float) -> np.ndarray:
    """e-folding times (years) of the carbon cycle's decaying modes, ascending:
    -dt / ln(lambda) for every eigenvalue lambda of A except the conserved one (= 1)."""
    # <paper2code name="carbon timescales">
    lam = np.sort(np.linalg.eigvals(A).real)[:-1]
    return np.sort(-dt / np.log(lam))
    # </paper2code name="carbon timescales">


def equilibrium_partition(total: float, m_eq: np.ndarray) -> np.ndarray:
    """The long-run masses once a total carbon mass has settled, with no further emissions."""
    # <paper2code name="equilibrium partition">
    m_eq = np.asarray(m_eq, dtype=float)
    return total * m_eq / m_eq.sum()
    # </paper2code name="equilibrium partition">


def fit_pattern_scaling(t_global: np.ndarray, t_local: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Least-squares T_local[:, k] ≈ intercept[k] + slope[k] T_global for every location k.

    Args:
        t_global: shape (n,), global mean temperature.
        t_local: shape (n, K), local temperatures.
    """
    # <paper2code name="pattern scaling fit">
    dg = t_global - t_global.mean()
    dl = t_local - t_local.mean(axis=0)
    slope = dg @ dl / (dg @ dg)
    intercept = t_local.mean(axis=0) - slope * t_global.mean()
    # </paper2code name="pattern scaling fit">
    return intercept, slope


def pattern_scaling(t_global: np.ndarray, intercept: np.ndarray, slope: np.ndarray) -> np.ndarray:
    """Local temperatures, shape (n, K), from a global temperature path of shape (n,)."""
    # <paper2code name="pattern scaling predict">
    return intercept + np.outer(t_global, slope)
    # </paper2code name="pattern scaling predict">


def gregory_regression(t_at: np.ndarray, imbalance: np.ndarray) -> tuple[float, float, float]:
    """Fit N = F_4x - lambda T to an abrupt-4xCO2 run (T_AT and the top-of-atmosphere
    imbalance N); returns (F_4x, lambda, ECS = F_4x / (2 lambda))."""
    # <paper2code name="gregory regression">
    X = np.column_stack([np.ones_like(t_at), t_at])
    (f4x, neg_lam), *_ = np.linalg.lstsq(X, imbalance, rcond=None)
    lam = -neg_lam
    return float(f4x), float(lam), float(f4x / (2.0 * lam))
    # </paper2code name="gregory regression">


def transient_climate_response(c1: float, c3: float, c4: float, f2x: float, ecs: float, years: int = 70) -> float:
    """T_AT after CO2 grows 1 % per year from pre-industrial (1-year steps) for `years` years."""
    # <paper2code name="transient climate response">
    T = np.zeros(2)
    for t in range(1, years + 1):
        forcing = f2x * t * np.log2(1.01)
        T = temperature_step(T, forcing, c1, c3, c4, f2x, ecs)
    return float(T[0])
    # </paper2code name="transient climate response">
