"""Tests for the climate emulator: mass conservation, equilibria, closed forms
of the linear responses, and regressions on synthetic data with known answers."""

import numpy as np
import pytest
from climate_emulator import (
    carbon_step,
    carbon_timescales,
    equilibrium_partition,
    equilibrium_temperature,
    fit_pattern_scaling,
    gregory_regression,
    pattern_scaling,
    radiative_forcing,
    simulate,
    temperature_step,
    transfer_matrix,
    transient_climate_response,
)

# DICE-2016-like values for a 5-year step
M_EQ = np.array([588.0, 360.0, 1720.0])
B12, B23, DT = 0.12, 0.007, 5.0
F2X, ECS = 3.6813, 3.1
C1, C3, C4 = 0.1005, 0.088, 0.025
PARAMS = dict(dt=DT, m_at_pre=588.0, f2x=F2X, ecs=ECS, c1=C1, c3=C3, c4=C4)


def test_transfer_matrix_hand_computed():
    A = transfer_matrix(0.2, 0.1, np.array([100.0, 200.0, 400.0]))
    # b21 = 0.2 * 100 / 200 = 0.1, b32 = 0.1 * 200 / 400 = 0.05
    np.testing.assert_allclose(A, [[0.8, 0.1, 0.0], [0.2, 0.8, 0.05], [0.0, 0.1, 0.95]])


def test_transfer_matrix_conserves_mass_and_equilibrium():
    A = transfer_matrix(B12, B23, M_EQ)
    np.testing.assert_allclose(A.sum(axis=0), 1.0, rtol=1e-14)
    assert np.all(A >= 0)
    np.testing.assert_allclose(A @ M_EQ, M_EQ, rtol=1e-13)
    # detailed balance: the flux AT -> UO equals UO -> AT at equilibrium
    assert A[1, 0] * M_EQ[0] == pytest.approx(A[0, 1] * M_EQ[1])
    assert A[2, 1] * M_EQ[1] == pytest.approx(A[1, 2] * M_EQ[2])


def test_carbon_step_hand_and_mass():
    A = np.array([[0.8, 0.1, 0.0], [0.2, 0.8, 0.05], [0.0, 0.1, 0.95]])
    M = np.array([100.0, 200.0, 400.0])
    # M is A's fixed point, so A M = M, and 10 GtC/yr for 5 years go to the atmosphere
    np.testing.assert_allclose(carbon_step(M, A, 10.0, 5.0), [150.0, 200.0, 400.0])
    # (0.8 * 50 + 0.1 * 100, 0.2 * 50 + 0.8 * 100 + 0.05 * 20, 0.1 * 100 + 0.95 * 20) + (2, 0, 0)
    np.testing.assert_allclose(carbon_step(np.array([50.0, 100.0, 20.0]), A, 1.0, 2.0), [52.0, 91.0, 29.0])
    rng = np.random.default_rng(0)
    A = transfer_matrix(B12, B23, M_EQ)
    for _ in range(5):
        M0 = rng.uniform(300, 2000, size=3)
        e = rng.uniform(0, 20)
        assert carbon_step(M0, A, e, DT).sum() == pytest.approx(M0.sum() + e * DT, rel=1e-13)


def test_radiative_forcing():
    assert float(radiative_forcing(588.0, 588.0, F2X, 0.5)) == pytest.approx(0.5)
    assert float(radiative_forcing(2 * 588.0, 588.0, F2X, 0.0)) == pytest.approx(F2X)
    np.testing.assert_allclose(radiative_forcing(np.array([4 * 588.0, 294.0]), 588.0, F2X, 0.25),
                               [2 * F2X + 0.25, -F2X + 0.25])


def test_equilibrium_temperature():
    assert equilibrium_temperature(F2X, F2X, ECS) == pytest.approx(ECS)
    assert equilibrium_temperature(2.0, 4.0, 3.0) == pytest.approx(1.5)


def test_temperature_step_hand_computed():
    # lambda = f2x / ecs = 4 / 2 = 2; T_AT' = 1 + 0.1 (3 - 2 - 0.5 (1 - 0.4)) = 1.07
    # T_OC' = 0.4 + 0.05 (1 - 0.4) = 0.43
    T = temperature_step(np.array([1.0, 0.4]), 3.0, 0.1, 0.5, 0.05, 4.0, 2.0)
    np.testing.assert_allclose(T, [1.07, 0.43])


def test_temperature_equilibrium_is_fixed_and_attracting():
    forcing = 4.5
    t_eq = ECS * forcing / F2X
    np.testing.assert_allclose(temperature_step(np.array([t_eq, t_eq]), forcing, C1, C3, C4, F2X, ECS), [t_eq, t_eq])
    T = np.zeros(2)
    path = []
    for _ in range(2000):
        T = temperature_step(T, forcing, C1, C3, C4, F2X, ECS)
        path.append(T)
    path = np.array(path)
    np.testing.assert_allclose(T, [t_eq, t_eq], rtol=1e-6)
    assert np.all(np.diff(path[:, 1]) >= 0)  # deep ocean warms monotonically
    assert np.all(path[:, 0] >= path[:, 1] - 1e-12)


def test_simulate_stays_at_preindustrial_equilibrium():
    A = transfer_matrix(B12, B23, M_EQ)
    M, F, T = simulate(np.zeros(20), np.zeros(21), M_EQ, np.zeros(2), A, **PARAMS)
    assert M.shape == (21, 3) and F.shape == (21,) and T.shape == (21, 2)
    np.testing.assert_allclose(M, np.tile(M_EQ, (21, 1)), rtol=1e-12)
    np.testing.assert_allclose(F, 0.0, atol=1e-12)
    np.testing.assert_allclose(T, 0.0, atol=1e-12)


def test_simulate_first_step_hand_computed():
    A = np.array([[0.8, 0.1, 0.0], [0.2, 0.8, 0.05], [0.0, 0.1, 0.95]])
    m0 = np.array([100.0, 200.0, 400.0])
    M, F, T = simulate(np.array([20.0]), np.array([0.3, 0.7]), m0, np.array([0.5, 0.2]), A,
                       dt=5.0, m_at_pre=100.0, f2x=4.0, ecs=2.0, c1=0.1, c3=0.5, c4=0.05)
    np.testing.assert_allclose(M[1], [200.0, 200.0, 400.0])
    np.testing.assert_allclose(F, [0.3, 4.0 + 0.7])  # log2(200/100) = 1
    # T_AT' = 0.5 + 0.1 (4.7 - 2 * 0.5 - 0.5 * 0.3) = 0.855; T_OC' = 0.2 + 0.05 * 0.3 = 0.215
    np.testing.assert_allclose(T[1], [0.855, 0.215])


def test_simulate_mass_balance_and_pulse_partition():
    A = transfer_matrix(B12, B23, M_EQ)
    emissions = np.zeros(400)
    emissions[:4] = 25.0  # 500 GtC pulse over 20 years
    M, F, T = simulate(emissions, np.zeros(401), M_EQ, np.zeros(2), A, **PARAMS)
    cumulative = np.concatenate([[0.0], np.cumsum(emissions * DT)])
    np.testing.assert_allclose(M.sum(axis=1), M_EQ.sum() + cumulative, rtol=1e-12)
    assert np.argmax(T[:, 0]) < 60 and T[-1, 0] < T[:, 0].max()
    assert T[-1, 0] == pytest.approx(ECS * np.log2(M[-1, 0] / 588.0), rel=0.02)  # slow forcing: near equilibrium


def test_simulate_monotone_response_to_growing_emissions():
    A = transfer_matrix(B12, B23, M_EQ)
    emissions = np.linspace(5.0, 20.0, 30)
    f_ex = np.linspace(0.0, 1.0, 31)
    M, F, T = simulate(emissions, f_ex, M_EQ, np.zeros(2), A, **PARAMS)
    assert np.all(np.diff(M[:, 0]) > 0) and np.all(np.diff(F) > 0)
    assert np.all(np.diff(T[:, 0]) > 0) and np.all(np.diff(T[1:, 1]) > 0)
    more, _, T_more = simulate(emissions * 1.5, f_ex, M_EQ, np.zeros(2), A, **PARAMS)
    assert np.all(more[1:, 0] > M[1:, 0]) and np.all(T_more[2:, 0] > T[2:, 0])


def test_carbon_timescales_are_the_decay_modes():
    A = transfer_matrix(B12, B23, M_EQ)
    tau = carbon_timescales(A, DT)
    assert tau.shape == (2,) and tau[0] < tau[1]
    lam = np.exp(-DT / tau)
    for value in lam:
        assert abs(np.linalg.det(A - value * np.eye(3))) < 1e-10
    assert 1.0 + lam.sum() == pytest.approx(np.trace(A))
    # a 1-year, two-mode hand case: eigenvalues 1, 0.9, 0.5 of a triangular-free chain
    P = transfer_matrix(0.25, 0.25, np.array([1.0, 1.0, 1.0]))  # eigenvalues 1, 0.75, 0.25
    np.testing.assert_allclose(carbon_timescales(P, 1.0), [-1 / np.log(0.25), -1 / np.log(0.75)])


def test_equilibrium_partition_matches_long_run():
    A = transfer_matrix(B12, B23, M_EQ)
    M = np.array([900.0, 400.0, 1750.0])
    long_run = np.linalg.matrix_power(A, 20000) @ M
    np.testing.assert_allclose(equilibrium_partition(M.sum(), M_EQ), long_run, rtol=1e-8)
    np.testing.assert_allclose(equilibrium_partition(10.0, np.array([1.0, 3.0, 6.0])), [1.0, 3.0, 6.0])
    np.testing.assert_allclose(equilibrium_partition(20.0, [2.0, 2.0, 6.0]), [4.0, 4.0, 12.0])


def test_pattern_scaling_hand_computed():
    t_global = np.array([0.0, 1.0, 2.0])
    t_local = np.array([[1.0, 0.0], [2.0, 2.0], [4.0, 1.0]])
    intercept, slope = fit_pattern_scaling(t_global, t_local)
    # column 0: slope = cov / var = (1*... ) -> 1.5, intercept = 7/3 - 1.5 = 5/6; column 1: slope 0.5, intercept 0.5
    np.testing.assert_allclose(slope, [1.5, 0.5])
    np.testing.assert_allclose(intercept, [5.0 / 6.0, 0.5])
    np.testing.assert_allclose(pattern_scaling(np.array([2.0, -1.0]), intercept, slope),
                               [[5 / 6 + 3.0, 1.5], [5 / 6 - 1.5, 0.0]])


def test_pattern_scaling_recovers_synthetic_patterns():
    rng = np.random.default_rng(1)
    t_global = np.linspace(0.0, 3.0, 120) + 0.1 * rng.normal(size=120)
    a = rng.normal(size=6)
    b = rng.uniform(0.5, 2.5, size=6)
    t_local = a + np.outer(t_global, b)
    intercept, slope = fit_pattern_scaling(t_global, t_local)
    np.testing.assert_allclose(slope, b, rtol=1e-10)
    np.testing.assert_allclose(intercept, a, atol=1e-10)
    np.testing.assert_allclose(pattern_scaling(t_global, intercept, slope), t_local, atol=1e-10)
    noisy = t_local + 0.05 * rng.normal(size=t_local.shape)
    _, slope = fit_pattern_scaling(t_global, noisy)
    np.testing.assert_allclose(slope, b, atol=0.02)


def test_gregory_regression():
    T = np.array([1.0, 2.0, 3.0, 4.0])
    N = 7.0 - 1.2 * T
    f4x, lam, ecs = gregory_regression(T, N)
    assert (f4x, lam, ecs) == pytest.approx((7.0, 1.2, 7.0 / 2.4))
    rng = np.random.default_rng(2)
    T = np.linspace(2.0, 6.0, 150)
    N = 7.4 - 1.1 * T + 0.2 * rng.normal(size=150)
    f4x, lam, ecs = gregory_regression(T, N)
    assert lam == pytest.approx(1.1, abs=0.05)
    assert ecs == pytest.approx(7.4 / 2.2, rel=0.03)


def test_transient_climate_response():
    # without deep-ocean coupling the model is one box: T' = (1 - c1 lam) T + c1 F_t
    c1, lam = 0.05, F2X / ECS
    T = 0.0
    for t in range(1, 71):
        T = (1 - c1 * lam) * T + c1 * F2X * t * np.log2(1.01)
    assert transient_climate_response(c1, 0.0, 0.05, F2X, ECS) == pytest.approx(T)
    tcr = transient_climate_response(0.1, 0.7, 0.03, F2X, ECS)
    assert 0.0 < tcr < transient_climate_response(0.1, 0.0, 0.03, F2X, ECS) < ECS
    assert transient_climate_response(0.1, 0.7, 0.03, F2X, ECS, years=35) < tcr
