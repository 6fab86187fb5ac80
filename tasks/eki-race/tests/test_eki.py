"""Tests for Lorenz-96, RK4 and ensemble Kalman inversion, against hand values,
invariants of the dynamics, and the linear-Gaussian closed forms."""

import math

import numpy as np
import pytest
from eki import (
    data_misfit,
    data_misfit_controller,
    discrepancy_reached,
    ensemble_covariances,
    eki_update,
    lorenz96,
    lorenz96_statistics,
    rk4_step,
    run_eki,
    tikhonov_augment,
)

# A small linear-Gaussian inverse problem: y = A θ + noise, θ ~ N(m0, C0)
A = np.array([[1.0, 2.0, 0.0], [0.0, 1.0, -1.0]])
GAMMA = np.diag([0.1, 0.2])
Y = np.array([1.0, -0.5])
M0 = np.array([0.5, 0.0, 1.0])
C0 = np.diag([1.0, 2.0, 0.5])
POST_COV = np.linalg.inv(A.T @ np.linalg.solve(GAMMA, A) + np.linalg.inv(C0))
POST_MEAN = POST_COV @ (A.T @ np.linalg.solve(GAMMA, Y) + np.linalg.solve(C0, M0))


def linear_G(theta):
    return theta @ A.T


# ---------------------------------------------------------------- Lorenz-96


def test_lorenz96_hand_computed():
    x = np.array([1.0, 2.0, 3.0, 4.0])
    # i=0: (x1 - x2) x3 - x0 + 8 = -4 - 1 + 8; i=1: (x2 - x3) x0 - x1 + 8; ...
    np.testing.assert_allclose(lorenz96(x, 8.0), [3.0, 5.0, 11.0, 1.0])
    batch = np.stack([x, x[::-1]])
    # reversed: [4,3,2,1] -> i=0: (3-2)*1-4+8=5; i=1: (2-1)*4-3+8=9; i=2: (1-4)*3-2+8=-3; i=3: (4-3)*2-1+8=9
    np.testing.assert_allclose(lorenz96(batch, np.array([[8.0], [8.0]])), [[3, 5, 11, 1], [5, 9, -3, 9]])


def test_lorenz96_fixed_point_and_energy():
    for F in (0.5, 8.0):
        np.testing.assert_allclose(lorenz96(np.full(40, F), F), 0.0, atol=1e-12)
    rng = np.random.default_rng(0)
    x = rng.normal(2.0, 3.0, size=(5, 36))
    F = 7.0
    # the advection term conserves energy: x . f(x) = -|x|^2 + F sum(x)
    np.testing.assert_allclose(np.sum(x * lorenz96(x, F), axis=1), -np.sum(x**2, axis=1) + F * np.sum(x, axis=1))


# ---------------------------------------------------------------- RK4


def test_rk4_linear_is_degree_four_taylor():
    M = np.array([[-1.0, 2.0], [-0.5, -0.3]])
    x = np.array([1.0, -2.0])
    h = 0.3
    hM = h * M
    P = np.eye(2) + hM + hM @ hM / 2 + hM @ hM @ hM / 6 + hM @ hM @ hM @ hM / 24
    np.testing.assert_allclose(rk4_step(lambda z: M @ z, x, h), P @ x, rtol=1e-13)
    lam = -2.0 + 1.0j
    z = lam * h
    assert rk4_step(lambda v: lam * v, 1.0 + 0j, h) == pytest.approx(sum(z**k / math.factorial(k) for k in range(5)))


def test_rk4_fourth_order_on_logistic():
    def err(n):
        x, h = np.array([0.1]), 2.0 / n
        for _ in range(n):
            x = rk4_step(lambda v: v * (1 - v), x, h)
        exact = 0.1 * np.exp(2.0) / (1 - 0.1 + 0.1 * np.exp(2.0))
        return abs(x[0] - exact)

    ratio = err(10) / err(20)
    assert 13 < ratio < 19


# ---------------------------------------------------------------- forward map


def test_statistics_at_fixed_point():
    theta = np.array([[3.0], [5.0]])
    for F in (3.0,):
        g = lorenz96_statistics(theta[:1], np.full(10, F), dt=0.05, n_spinup=5, n_steps=20)
        np.testing.assert_allclose(g, [[F, F**2]], rtol=1e-12)
    g = lorenz96_statistics(theta, np.full(10, 5.0), dt=0.05, n_spinup=5, n_steps=20)
    assert g.shape == (2, 2)
    np.testing.assert_allclose(g[1], [5.0, 25.0], rtol=1e-12)
    assert abs(g[0, 0] - 5.0) > 0.1  # the member with F = 3 leaves the state x = 5


def test_statistics_linear_decay_hand_computed():
    # F = 0 and a tiny state: dx/dt ≈ -x, so x(t) = x0 e^{-t} (quadratic term ~1e-6 relative)
    v = np.array([1.0, -2.0, 3.0, 0.5, 1.5, -1.0])
    x0 = 1e-6 * v
    dt, s, n = 0.1, 7, 13
    g = lorenz96_statistics(np.array([[0.0]]), x0, dt=dt, n_spinup=s, n_steps=n)
    k = np.arange(s + 1, s + n + 1)
    expected_mean = 1e-6 * v.mean() * np.mean(np.exp(-k * dt))
    expected_sq = 1e-12 * np.mean(v**2) * np.mean(np.exp(-2 * k * dt))
    np.testing.assert_allclose(g[0], [expected_mean, expected_sq], rtol=1e-4)


def test_statistics_energy_balance_on_attractor():
    # time average of d/dt |x|^2 / 2 vanishes: <x^2> = F <x> on the attractor
    rng = np.random.default_rng(1)
    theta = np.array([[6.0], [10.0]])
    g = lorenz96_statistics(theta, 8.0 + 0.5 * rng.normal(size=40), dt=0.05, n_spinup=60, n_steps=400)
    np.testing.assert_allclose(g[:, 1] / g[:, 0], theta[:, 0], rtol=0.03)
    assert np.all(g[:, 1] > g[:, 0] ** 2)


# ---------------------------------------------------------------- EKI


def test_ensemble_covariances_hand_computed():
    theta = np.array([[0.0], [1.0], [2.0]])
    g = np.array([[1.0, 0.0], [3.0, 1.0], [5.0, -1.0]])
    c_tg, c_gg = ensemble_covariances(theta, g)
    # deviations θ: -1, 0, 1; g: (-2, 0), (0, 1), (2, -1); divide by J - 1 = 2
    np.testing.assert_allclose(c_tg, [[2.0, -0.5]])
    np.testing.assert_allclose(c_gg, [[4.0, -1.0], [-1.0, 1.0]])
    rng = np.random.default_rng(2)
    th, gg = rng.normal(size=(7, 3)), rng.normal(size=(7, 2))
    full = np.cov(np.hstack([th, gg]).T)
    c_tg, c_gg = ensemble_covariances(th, gg)
    np.testing.assert_allclose(c_tg, full[:3, 3:])
    np.testing.assert_allclose(c_gg, full[3:, 3:])


def test_deterministic_update_is_kalman_on_linear_map():
    rng = np.random.default_rng(3)
    theta = rng.multivariate_normal(M0, C0, size=6)
    for h in (1.0, 0.25):
        new = eki_update(theta, linear_G(theta), Y, GAMMA, h=h)
        C = np.cov(theta.T)
        K = C @ A.T @ np.linalg.inv(A @ C @ A.T + GAMMA / h)
        np.testing.assert_allclose(new, theta + (Y - theta @ A.T) @ K.T, rtol=1e-10, atol=1e-12)


def test_stochastic_one_step_gives_posterior():
    rng = np.random.default_rng(4)
    theta = rng.multivariate_normal(M0, C0, size=20_000)
    new = eki_update(theta, linear_G(theta), Y, GAMMA, h=1.0, rng=rng)
    np.testing.assert_allclose(new.mean(axis=0), POST_MEAN, atol=0.02)
    np.testing.assert_allclose(np.cov(new.T), POST_COV, atol=0.01)


def test_perturbations_have_covariance_gamma_over_h():
    rng = np.random.default_rng(5)
    theta = rng.multivariate_normal(M0, C0, size=20_000)
    g = linear_G(theta)
    h = 0.25
    det = eki_update(theta, g, Y, GAMMA, h=h)
    sto = eki_update(theta, g, Y, GAMMA, h=h, rng=rng)
    # sto - det = K η with K = C^{θG}(C^{GG} + Γ/h)^{-1} and η ~ N(0, Γ/h)
    C = np.cov(theta.T)
    K = C @ A.T @ np.linalg.inv(A @ C @ A.T + GAMMA / h)
    d = sto - det
    np.testing.assert_allclose(d.mean(axis=0), 0.0, atol=0.02)
    np.testing.assert_allclose(np.cov(d.T), K @ (GAMMA / h) @ K.T, rtol=0.05, atol=2e-3)


def test_correlated_perturbations_have_covariance_gamma_over_h():
    # A noise covariance with correlations: η_j must be drawn from N(0, Γ/h) itself,
    # not from its diagonal.
    gamma = np.array([[0.2, 0.15], [0.15, 0.3]])
    rng = np.random.default_rng(8)
    theta = rng.multivariate_normal(M0, C0, size=40_000)
    g = linear_G(theta)
    h = 0.5
    d = eki_update(theta, g, Y, gamma, h=h, rng=rng) - eki_update(theta, g, Y, gamma, h=h)
    C = np.cov(theta.T)
    K = C @ A.T @ np.linalg.inv(A @ C @ A.T + gamma / h)
    np.testing.assert_allclose(d.mean(axis=0), 0.0, atol=0.02)
    np.testing.assert_allclose(np.cov(d.T), K @ (gamma / h) @ K.T, rtol=0.05, atol=2e-3)


def test_ensemble_stays_in_initial_span():
    rng = np.random.default_rng(6)
    theta0 = rng.normal(size=(4, 10))
    W = rng.normal(size=(3, 10))

    def G(th):
        return np.tanh(th @ W.T)

    for stochastic in (False, True):
        theta, n = run_eki(G, theta0, np.array([0.3, -0.2, 0.1]), 0.01 * np.eye(3), 5,
                           rng=np.random.default_rng(7) if stochastic else None)
        assert n == 5
        coef, *_ = np.linalg.lstsq(theta0.T, theta.T, rcond=None)
        np.testing.assert_allclose(theta0.T @ coef, theta.T, atol=1e-10)
        assert not np.allclose(theta, theta0)


def test_deterministic_ensemble_collapses():
    rng = np.random.default_rng(8)
    theta = rng.multivariate_normal(M0, C0, size=8)
    spreads = []
    for _ in range(6):
        spreads.append(np.trace(np.cov(theta.T)))
        theta = eki_update(theta, linear_G(theta), Y, GAMMA)
    assert all(b < a for a, b in zip(spreads, spreads[1:]))
    assert spreads[-1] < 0.2 * spreads[0]


def test_data_misfit_hand_computed():
    g = np.array([[0.0, 0.0], [1.0, 2.0], [3.0, 2.0], [1.0, 0.0]])
    phi = data_misfit(g, np.array([1.0, 2.0]), np.diag([1.0, 4.0]))
    np.testing.assert_allclose(phi, [1.0, 0.0, 2.0, 0.5])
    gamma = np.array([[2.0, 1.0], [1.0, 2.0]])  # inverse: [[2, -1], [-1, 2]] / 3
    np.testing.assert_allclose(data_misfit(np.array([[0.0, 0.0]]), np.array([1.0, 1.0]), gamma), [1.0 / 3.0])


def test_discrepancy_principle_threshold():
    gamma = np.diag([1.0, 4.0])
    y = np.array([0.0, 0.0])
    # mean prediction (1, 2): whitened squared norm 1 + 1 = 2 against tau^2 m = 2 tau^2
    g = np.array([[0.0, 1.0], [2.0, 3.0]])
    assert discrepancy_reached(g, y, gamma, 1.0)
    assert discrepancy_reached(g, y, gamma, 1.01)
    assert not discrepancy_reached(g, y, gamma, 0.99)
    assert not discrepancy_reached(np.array([[0.0, 4.0], [2.0, 0.0]]), y, gamma, 0.99)
    # whitened squared norm 1.2^2 + 0.8^2 / 4 = 1.6 against 2 tau^2 = 1.62 for tau = 0.9
    assert discrepancy_reached(np.array([[1.2, 0.8]]), y, gamma, 0.9)
    assert not discrepancy_reached(np.array([[1.2, 0.8]]), y, gamma, 0.89)


def test_data_misfit_controller_hand_computed():
    # mean 2, var 1, m = 4: max(4/4, sqrt(4/2)) = sqrt 2, capped by 1 - t
    assert data_misfit_controller(np.array([1.0, 3.0]), 4, 0.0) == pytest.approx(1.0)
    assert data_misfit_controller(np.array([1.0, 3.0]), 4, 0.7) == pytest.approx(0.3)
    # mean 20, var 100: max(0.1, sqrt(0.02))
    assert data_misfit_controller(np.array([10.0, 30.0]), 4, 0.5) == pytest.approx(np.sqrt(0.02))
    # mean 20, var 1: max(0.1, sqrt 2 ) -> capped at 1 - 0.2
    assert data_misfit_controller(np.array([19.0, 21.0]), 4, 0.2) == pytest.approx(0.8)
    # mean 2, var 100: max(1, 0.1414) -> 1, capped at 1 - 0.5
    assert data_misfit_controller(np.array([-8.0, 12.0]), 4, 0.5) == pytest.approx(0.5)
    assert data_misfit_controller(np.array([-8.0, 12.0]), 1, 0.1) == pytest.approx(0.25)


def test_adaptive_stochastic_eki_reaches_posterior():
    rng = np.random.default_rng(9)
    theta0 = rng.multivariate_normal(M0, C0, size=5000)
    theta, n = run_eki(linear_G, theta0, Y, GAMMA, 50, rng=rng, adaptive=True)
    assert 1 < n < 50
    np.testing.assert_allclose(theta.mean(axis=0), POST_MEAN, atol=0.04)
    np.testing.assert_allclose(np.cov(theta.T), POST_COV, atol=0.02)


def test_tikhonov_augmentation():
    G_aug, y_aug, gamma_aug = tikhonov_augment(linear_G, M0, C0, Y, GAMMA)
    theta = np.array([[1.0, 2.0, 3.0], [0.0, -1.0, 1.0]])
    np.testing.assert_allclose(G_aug(theta), [[5.0, -1.0, 1.0, 2.0, 3.0], [-2.0, -2.0, 0.0, -1.0, 1.0]])
    np.testing.assert_allclose(y_aug, [1.0, -0.5, 0.5, 0.0, 1.0])
    np.testing.assert_allclose(gamma_aug, np.diag([0.1, 0.2, 1.0, 2.0, 0.5]))


def test_teki_converges_to_map_estimate():
    # A has a null space, so plain EKI cannot pin θ down; TEKI's fixed point is the MAP = posterior mean
    G_aug, y_aug, gamma_aug = tikhonov_augment(linear_G, M0, C0, Y, GAMMA)
    theta0 = np.random.default_rng(10).multivariate_normal(M0, C0, size=10)
    theta, _ = run_eki(G_aug, theta0, y_aug, gamma_aug, 100)
    np.testing.assert_allclose(theta.mean(axis=0), POST_MEAN, atol=0.02)


def test_discrepancy_principle_stops_early():
    rng = np.random.default_rng(11)
    theta0 = rng.multivariate_normal(M0, C0, size=20)
    y = A @ np.array([0.2, 0.3, -0.4])
    theta, n = run_eki(linear_G, theta0, y, GAMMA, 100, tau=1.0)
    assert 1 < n < 100
    r = y - linear_G(theta).mean(axis=0)
    assert r @ np.linalg.solve(GAMMA, r) <= 2.0
    # an ensemble that already fits stops before any update
    fit = np.array([0.2, 0.3, -0.4]) + 1e-3 * rng.normal(size=(5, 3))
    same, n = run_eki(linear_G, fit, y, GAMMA, 100, tau=1.0)
    assert n == 1
    np.testing.assert_array_equal(same, fit)


def test_eki_recovers_lorenz96_forcing():
    rng = np.random.default_rng(12)
    x0 = 8.0 + 0.5 * rng.normal(size=40)

    def G(theta):
        return lorenz96_statistics(theta, x0, dt=0.05, n_spinup=40, n_steps=200)

    y = G(np.array([[8.0]]))[0]
    gamma = np.diag([0.02, 0.5]) ** 2
    theta0 = rng.normal(6.0, 1.0, size=(8, 1))
    theta, n = run_eki(G, theta0, y, gamma, 2)
    assert n == 2
    assert theta.mean() == pytest.approx(8.0, abs=0.3)
