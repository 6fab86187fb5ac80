"""AdEMAMix steps against values worked out by hand from the update rule."""

import math

import numpy as np
import pytest
from ademamix import AdEMAMix


def arr(*values):
    return np.array(values, dtype=float)


def test_first_step_without_slow_ema_is_sign_like():
    p = arr(1.0, -1.0, 0.0)
    opt = AdEMAMix([p], lr=0.1, alpha=0.0, eps=1e-3)
    g = arr(2.0, -0.5, 1e-2)
    opt.step([g])
    # bias-corrected first step: m1_hat = g, sqrt(nu_hat) = |g|
    np.testing.assert_allclose(p, arr(1.0, -1.0, 0.0) - 0.1 * g / (np.abs(g) + 1e-3))


def test_first_step_mixes_uncorrected_slow_ema():
    p = arr(0.0, 0.0)
    opt = AdEMAMix([p], lr=0.1, betas=(0.9, 0.999, 0.99), alpha=5.0, eps=1e-8)
    opt.step([arr(3.0, -2.0)])
    # m1_hat = g, m2 = (1 - 0.99) g (the slow EMA is not bias-corrected), sqrt(nu_hat) = |g|
    np.testing.assert_allclose(p, -0.1 * (1.0 + 5.0 * 0.01) * arr(1.0, -1.0), rtol=1e-7)
    np.testing.assert_allclose(opt.m2[0], arr(0.03, -0.02))


def test_moments_after_two_steps():
    p = arr(0.0)
    opt = AdEMAMix([p], lr=0.1, betas=(0.5, 0.75, 0.8), alpha=2.0)
    opt.step([arr(2.0)])
    opt.step([arr(1.0)])
    np.testing.assert_allclose(opt.m1[0], arr(0.5 * 1.0 + 0.5 * 1.0))
    np.testing.assert_allclose(opt.m2[0], arr(0.8 * 0.4 + 0.2 * 1.0))
    np.testing.assert_allclose(opt.nu[0], arr(0.75 * 1.0 + 0.25 * 1.0))
    assert opt.t == 2


def test_second_step_hand_computed():
    p = arr(0.0)
    opt = AdEMAMix([p], lr=0.1, betas=(0.5, 0.75, 0.8), alpha=2.0, eps=1e-3)
    opt.step([arr(2.0)])
    # m1 = 1, m2 = 0.4, nu = 1: m1_hat = 2, nu_hat = 4
    u1 = (2.0 + 2.0 * 0.4) / (2.0 + 1e-3)
    np.testing.assert_allclose(p, arr(-0.1 * u1))
    opt.step([arr(1.0)])
    # m1 = 1, m2 = 0.52, nu = 1: m1_hat = 1 / 0.75, nu_hat = 1 / 0.4375
    u2 = (1.0 / 0.75 + 2.0 * 0.52) / (math.sqrt(1.0 / 0.4375) + 1e-3)
    np.testing.assert_allclose(p, arr(-0.1 * (u1 + u2)))


def test_third_step_bias_correction_powers():
    p = arr(0.0)
    opt = AdEMAMix([p], lr=1.0, betas=(0.5, 0.5, 0.5), alpha=0.0, eps=0.0)
    for g in (4.0, 4.0, 1.0):
        before = p.copy()
        opt.step([arr(g)])
    # m1 = 0.5 * 3 + 0.5 = 2, nu = 0.5 * 12 + 0.5 = 6.5 after three steps (bias terms 7/8)
    expected = (2.0 / 0.875) / math.sqrt(6.5 / 0.875)
    np.testing.assert_allclose(before - p, arr(expected))


def test_weight_decay_uses_previous_parameters():
    p = arr(2.0)
    opt = AdEMAMix([p], lr=0.5, alpha=0.0, eps=1e-12, weight_decay=0.5)
    opt.step([arr(1.0)])
    # theta - lr * (1 + wd * theta) = 2 - 0.5 * (1 + 1) = 1
    np.testing.assert_allclose(p, arr(1.0))


def test_weight_decay_alone():
    p = arr(4.0, -2.0)
    opt = AdEMAMix([p], lr=0.1, alpha=5.0, weight_decay=0.5)
    for _ in range(3):
        opt.step([arr(0.0, 0.0)])
    np.testing.assert_allclose(p, arr(4.0, -2.0) * 0.95**3)


def test_no_warmup_uses_final_alpha_and_beta3():
    p = arr(0.0)
    opt = AdEMAMix([p], lr=0.1, betas=(0.5, 0.9, 0.99), alpha=8.0, T_alpha_beta3=None, eps=0.0)
    opt.step([arr(1.0)])
    np.testing.assert_allclose(opt.m2[0], arr(0.01))
    np.testing.assert_allclose(p, arr(-0.1 * (1.0 + 8.0 * 0.01)))


def _beta3(t, T, beta1, beta3):
    s = t / T
    if s >= 1:
        return beta3
    return math.exp(1.0 / ((1 - s) / math.log(beta1) + s / math.log(beta3)))


def test_warmup_schedules_inside_step():
    T = 4
    p = arr(0.0)
    opt = AdEMAMix([p], lr=0.1, betas=(0.5, 0.9, 0.99), alpha=8.0, T_alpha_beta3=T, eps=0.0)
    m2 = 0.0
    theta = 0.0
    m1 = nu = 0.0
    for t in range(1, 7):
        g = 1.0 if t % 2 else 3.0
        b3 = _beta3(t, T, 0.5, 0.99)
        alpha = 8.0 * min(t / T, 1.0)
        m1 = 0.5 * m1 + 0.5 * g
        nu = 0.9 * nu + 0.1 * g * g
        m2 = b3 * m2 + (1 - b3) * g
        theta -= 0.1 * (m1 / (1 - 0.5**t) + alpha * m2) / math.sqrt(nu / (1 - 0.9**t))
        opt.step([arr(g)])
        np.testing.assert_allclose(opt.m2[0], arr(m2), rtol=1e-10)
        np.testing.assert_allclose(p, arr(theta), rtol=1e-10)


def test_first_warmup_step_values():
    p = arr(0.0)
    opt = AdEMAMix([p], lr=1.0, betas=(0.5, 0.9, 0.99), alpha=8.0, T_alpha_beta3=4, eps=0.0)
    opt.step([arr(2.0)])
    b3 = math.exp(1.0 / (0.75 / math.log(0.5) + 0.25 / math.log(0.99)))
    np.testing.assert_allclose(opt.m2[0], arr((1 - b3) * 2.0))
    np.testing.assert_allclose(p, arr(-(1.0 + 2.0 * (1 - b3))))


def test_every_parameter_is_updated():
    ps = [arr(1.0, 2.0), np.ones((2, 2))]
    opt = AdEMAMix(ps, lr=0.1, betas=(0.9, 0.999, 0.99), alpha=0.0, eps=1e-12)
    opt.step([arr(1.0, -1.0), -np.ones((2, 2))])
    np.testing.assert_allclose(ps[0], arr(0.9, 2.1))
    np.testing.assert_allclose(ps[1], np.full((2, 2), 1.1))


def test_converges_on_quadratic():
    target = arr(3.0, -1.0, 0.5)
    theta = np.zeros(3)
    opt = AdEMAMix([theta], lr=0.01, betas=(0.9, 0.999, 0.999), alpha=5.0, T_alpha_beta3=1000)
    for _ in range(3000):
        opt.step([theta - target])
    np.testing.assert_allclose(theta, target, atol=0.05)
