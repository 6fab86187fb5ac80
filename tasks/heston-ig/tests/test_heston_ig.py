"""Tests for the iVi scheme, against closed forms, Inverse Gaussian identities,
Wald's identities for Brownian first-passage times, and a Fourier price."""

import numpy as np
import pytest
from heston_ig import (
    call_price,
    expected_integrated_variance,
    expected_variance,
    heston_log_step,
    ig_parameters,
    ivi_step,
    simulate_heston,
    simulate_square_root,
    variance_of_variance,
)

# a = kappa * theta, b = kappa, c = sigma
A, B, C = 0.09, 1.5, 0.7


def heston_call_fourier(s0, K, v0, kappa, theta, sigma, rho, r, T):
    """Heston call by Gil-Pelaez inversion of the characteristic function of log S_T
    (the 'little trap' form of Albrecher et al.), independent of the scheme."""
    u = np.linspace(1e-6, 150.0, 30001)

    def phi(u):
        iu = 1j * u
        beta = kappa - rho * sigma * iu
        d = np.sqrt(beta**2 + sigma**2 * (iu + u**2))
        g = (beta - d) / (beta + d)
        e = np.exp(-d * T)
        big_c = kappa * theta / sigma**2 * ((beta - d) * T - 2 * np.log((1 - g * e) / (1 - g)))
        big_d = (beta - d) / sigma**2 * (1 - e) / (1 - g * e)
        return np.exp(iu * (np.log(s0) + r * T) + big_c + big_d * v0)

    k = np.log(K)
    f1 = np.real(np.exp(-1j * u * k) * phi(u - 1j) / (1j * u * s0 * np.exp(r * T)))
    f2 = np.real(np.exp(-1j * u * k) * phi(u) / (1j * u))
    p1 = 0.5 + np.trapezoid(f1, u) / np.pi
    p2 = 0.5 + np.trapezoid(f2, u) / np.pi
    return s0 * p1 - K * np.exp(-r * T) * p2


def test_ig_parameters_hand_computed():
    alpha, mean, shape = ig_parameters(np.array([0.04, 0.0]), a=0.1, b=2.0, c=0.5, dt=0.1)
    # alpha = dt (v + a dt); mean = alpha / (1 + b dt); shape = (alpha / (c dt))^2
    np.testing.assert_allclose(alpha, [0.005, 0.001])
    np.testing.assert_allclose(mean, [0.005 / 1.2, 0.001 / 1.2])
    np.testing.assert_allclose(shape, [0.01, 0.0004])


def test_integrated_variance_is_inverse_gaussian():
    rng = np.random.default_rng(0)
    v, dt, n = 0.05, 0.2, 200_000
    _, dU, _ = ivi_step(np.full(n, v), A, B, C, dt, rng)
    alpha = dt * (v + A * dt)
    mu, sig = 1 + B * dt, C * dt  # first passage of mu s - sig W_s to alpha
    m, lam = alpha / mu, alpha**2 / sig**2
    assert dU.min() > 0
    assert dU.mean() == pytest.approx(m, rel=4 * np.sqrt(m / lam / n))
    assert dU.var() == pytest.approx(m**3 / lam, rel=0.03)
    # E[1/X] = 1/m + 1/lambda for X ~ IG(m, lambda)
    assert np.mean(1 / dU) == pytest.approx(1 / m + 1 / lam, rel=0.01)


def test_martingale_increment_wald_identities():
    rng = np.random.default_rng(1)
    v, dt, n = 0.03, 0.25, 200_000
    _, dU, dZ = ivi_step(np.full(n, v), A, B, C, dt, rng)
    # dZ = W at the first-passage time dU: E[dZ] = 0 and E[dZ^2] = E[dU]
    assert abs(dZ.mean()) < 4 * dZ.std() / np.sqrt(n)
    assert np.mean(dZ**2) == pytest.approx(dU.mean(), rel=0.02)
    # and the level is hit: (1 + b dt) dU - c dt dZ = dt (v + a dt)
    np.testing.assert_allclose((1 + B * dt) * dU - C * dt * dZ, dt * (v + A * dt), rtol=1e-9)


def test_variance_step_satisfies_integrated_sde():
    rng = np.random.default_rng(2)
    v = rng.uniform(0.0, 0.2, size=1000)
    dt = 0.1
    v_next, dU, dZ = ivi_step(v, A, B, C, dt, rng)
    # V_{i+1} - V_i = a dt - b dU + c dZ, and the implicit rule gives dU = dt V_{i+1}
    np.testing.assert_allclose(v_next, v + A * dt - B * dU + C * dZ, atol=1e-12)
    np.testing.assert_allclose(v_next, dU / dt, rtol=1e-8, atol=1e-12)


def test_nonnegative_when_feller_fails():
    rng = np.random.default_rng(3)
    # 2 a = 0.02 < c^2 = 1: the exact process hits zero
    V, U = simulate_square_root(0.01, 0.01, 1.0, 1.0, 2.0, 40, 2000, rng)
    assert V.shape == (2000, 41) and U.shape == (2000, 41)
    assert np.all(V >= 0)
    assert np.all(np.diff(U, axis=1) > 0)
    np.testing.assert_array_equal(V[:, 0], 0.01)
    np.testing.assert_array_equal(U[:, 0], 0.0)
    assert np.mean(V[:, -1] < 1e-4) > 0.1


def test_scheme_mean_follows_implicit_euler():
    rng = np.random.default_rng(4)
    v0, T, n_steps, n = 0.02, 1.0, 5, 100_000
    V, U = simulate_square_root(v0, A, B, C, T, n_steps, n, rng)
    dt = T / n_steps
    m = [v0]
    for _ in range(n_steps):
        m.append((m[-1] + A * dt) / (1 + B * dt))  # E[V_{i+1}] = E[dU_i] / dt
    se = V.std(axis=0) / np.sqrt(n)
    assert np.all(np.abs(V.mean(axis=0) - m) < 4 * se + 1e-12)
    u_mean = dt * np.cumsum(m[1:])
    assert U[:, -1].mean() == pytest.approx(u_mean[-1], abs=4 * U[:, -1].std() / np.sqrt(n))


def test_small_vol_of_vol_gives_ode():
    rng = np.random.default_rng(5)
    v0, a, b, T, n_steps = 0.1, 0.04, 2.0, 1.5, 1000
    V, U = simulate_square_root(v0, a, b, 1e-7, T, n_steps, 2, rng)
    dt = T / n_steps
    # c -> 0: the implicit Euler scheme for dv/dt = a - b v ...
    implicit = v0 * (1 + b * dt) ** -np.arange(n_steps + 1) + a / b * (1 - (1 + b * dt) ** -np.arange(n_steps + 1))
    np.testing.assert_allclose(V[0], implicit, atol=1e-6)
    np.testing.assert_allclose(V[1], implicit, atol=1e-6)
    # ... which is close to the exact ODE solution
    t = np.linspace(0, T, n_steps + 1)
    exact = a / b + (v0 - a / b) * np.exp(-b * t)
    np.testing.assert_allclose(V[0], exact, atol=3e-4)
    exact_u = a / b * T + (v0 - a / b) * (1 - np.exp(-b * T)) / b
    assert U[0, -1] == pytest.approx(exact_u, abs=3e-4)


def test_expected_variance_closed_form():
    # v0 = 0.04, kappa = 2, theta = 0.05: E[V_1] = 0.05 - 0.01 e^{-2}
    assert float(expected_variance(0.04, 0.1, 2.0, 1.0)) == pytest.approx(0.05 - 0.01 * np.exp(-2.0))
    assert float(expected_variance(0.04, 0.1, 2.0, 0.0)) == pytest.approx(0.04)
    assert float(expected_variance(0.04, 0.1, 2.0, 50.0)) == pytest.approx(0.05)
    t = np.linspace(0.1, 3, 30)
    h = 1e-6
    m = expected_variance(0.3, 0.1, 0.7, t)
    dm = (expected_variance(0.3, 0.1, 0.7, t + h) - expected_variance(0.3, 0.1, 0.7, t - h)) / (2 * h)
    np.testing.assert_allclose(dm, 0.1 - 0.7 * m, rtol=1e-6)  # dm/dt = a - b m


def test_expected_integrated_variance_closed_form():
    assert float(expected_integrated_variance(0.04, 0.1, 2.0, 0.0)) == pytest.approx(0.0)
    # 0.05 t + (0.04 - 0.05)(1 - e^{-2 t}) / 2 at t = 1
    assert float(expected_integrated_variance(0.04, 0.1, 2.0, 1.0)) == pytest.approx(0.05 - 0.005 * (1 - np.exp(-2)))
    t = np.linspace(0.2, 4, 20)
    h = 1e-6
    du = (expected_integrated_variance(0.3, 0.1, 0.7, t + h) - expected_integrated_variance(0.3, 0.1, 0.7, t - h)) / (2 * h)
    np.testing.assert_allclose(du, 0.1 / 0.7 + (0.3 - 0.1 / 0.7) * np.exp(-0.7 * t), rtol=1e-6)


def test_variance_of_variance_solves_moment_odes():
    # Ito: d E[V] = (a - b E[V]) dt, d E[V^2] = (2 a E[V] - 2 b E[V^2] + c^2 E[V]) dt
    v0, a, b, c = 0.3, 0.1, 0.7, 0.6
    m = np.array([v0, v0**2])

    def f(m):
        return np.array([a - b * m[0], 2 * a * m[0] - 2 * b * m[1] + c**2 * m[0]])

    h, out = 0.01, []
    for i in range(1, 301):
        k1 = f(m); k2 = f(m + h / 2 * k1); k3 = f(m + h / 2 * k2); k4 = f(m + h * k3)
        m = m + h / 6 * (k1 + 2 * k2 + 2 * k3 + k4)
        if i % 50 == 0:
            out.append(m[1] - m[0] ** 2)
    t = np.arange(50, 301, 50) * h
    np.testing.assert_allclose(variance_of_variance(v0, a, b, c, t), out, rtol=1e-8)
    assert float(variance_of_variance(v0, a, b, c, 0.0)) == pytest.approx(0.0, abs=1e-15)
    assert float(variance_of_variance(v0, a, b, c, 80.0)) == pytest.approx(a * c**2 / (2 * b**2))


def test_scheme_matches_closed_form_moments():
    rng = np.random.default_rng(6)
    v0, T, n = 0.02, 1.0, 10_000
    V, U = simulate_square_root(v0, A, B, C, T, 50, n, rng)
    ev = float(expected_variance(v0, A, B, T))
    eu = float(expected_integrated_variance(v0, A, B, T))
    # Monte Carlo error plus the O(dt) bias of the scheme
    assert V[:, -1].mean() == pytest.approx(ev, abs=4 * V[:, -1].std() / np.sqrt(n) + 0.01 * ev)
    assert U[:, -1].mean() == pytest.approx(eu, abs=4 * U[:, -1].std() / np.sqrt(n) + 0.01 * eu)
    assert V[:, -1].var() == pytest.approx(float(variance_of_variance(v0, A, B, C, T)), rel=0.08)


def test_log_price_step_hand_computed():
    # c dZ = v_next - v - a dt + b dU = 0.05 - 0.04 - 0.05 + 0.04 = 0  ->  dZ = 0 ... then a second case
    out = heston_log_step(np.array([np.log(100.0), 0.0]), r=0.05, rho=-0.6, a=0.1, b=2.0, c=0.5, dt=0.5,
                          v=np.array([0.04, 0.04]), v_next=np.array([0.05, 0.09]),
                          dU=np.array([0.02, 0.02]), z=np.array([1.5, -1.0]))
    # second path: dZ = (0.09 - 0.04 - 0.05 + 0.04) / 0.5 = 0.08
    expected = [np.log(100.0) + 0.025 - 0.01 + 0.8 * np.sqrt(0.02) * 1.5,
                0.025 - 0.01 - 0.6 * 0.08 - 0.8 * np.sqrt(0.02)]
    np.testing.assert_allclose(out, expected)


def test_discounted_price_is_martingale():
    # Each step is an exact martingale: exp(rho W_tau - rho^2 tau / 2) at the first passage tau.
    rng = np.random.default_rng(7)
    s0, r, T, n = 100.0, 0.03, 2.0, 40_000
    S, V = simulate_heston(s0, 0.05, 0.8, 0.06, 0.9, -0.8, r, T, 4, n, rng)
    assert S.shape == (n, 5) and V.shape == (n, 5)
    np.testing.assert_array_equal(S[:, 0], s0)
    disc = np.exp(-r * np.array([0.5, 1.0, 1.5, 2.0])) * S[:, 1:]
    se = disc.std(axis=0) / np.sqrt(n)
    assert np.all(np.abs(disc.mean(axis=0) - s0) < 4 * se)
    assert np.all(V >= 0)


def test_leverage_correlation():
    rng = np.random.default_rng(8)
    n = 50_000
    for rho in (-0.7, 0.5):
        S, V = simulate_heston(100.0, 0.04, 1.0, 0.04, 0.3, rho, 0.0, 0.001, 1, n, rng)
        corr = np.corrcoef(np.log(S[:, 1]), V[:, 1])[0, 1]
        assert corr == pytest.approx(rho, abs=0.03)


def test_call_price_against_fourier():
    rng = np.random.default_rng(9)
    params = dict(s0=100.0, v0=0.04, kappa=1.5, theta=0.06, sigma=0.7, rho=-0.7, r=0.02, T=1.0)
    S, _ = simulate_heston(*params.values(), 25, 20_000, rng)
    for K in (90.0, 120.0):
        ref = heston_call_fourier(params["s0"], K, *list(params.values())[1:])
        payoff = np.exp(-0.02) * np.maximum(S[:, -1] - K, 0.0)
        price = call_price(S[:, -1], K, 0.02, 1.0)
        assert price == pytest.approx(payoff.mean(), rel=1e-12)
        assert price == pytest.approx(ref, abs=4 * payoff.std() / np.sqrt(len(payoff)) + 0.05)


def test_call_price_hand_computed():
    s_T = np.array([90.0, 100.0, 110.0, 130.0])
    # payoffs 0, 0, 10, 30 -> mean 10, discounted by exp(-0.1)
    assert call_price(s_T, 100.0, 0.05, 2.0) == pytest.approx(10.0 * np.exp(-0.1))
