"""Tests for ADOPT, checked against values worked out by hand from the algorithm."""

import numpy as np
import pytest
from adopt import ADOPT


def arr(*values):
    return np.array(values, dtype=float)


def test_first_step_only_initializes_v():
    p = arr(1.0, -2.0)
    opt = ADOPT([p], lr=0.1)
    opt.step([arr(0.5, -3.0)])
    np.testing.assert_array_equal(p, arr(1.0, -2.0))
    np.testing.assert_array_equal(opt.m[0], arr(0.0, 0.0))
    np.testing.assert_allclose(opt.v[0], arr(0.25, 9.0))


def test_first_step_initial_v_is_squared_gradient():
    rng = np.random.default_rng(0)
    params = [rng.normal(size=(3, 4)), rng.normal(size=5)]
    grads = [rng.normal(size=(3, 4)), rng.normal(size=5)]
    opt = ADOPT([p.copy() for p in params])
    opt.step(grads)
    for v, g in zip(opt.v, grads):
        np.testing.assert_allclose(v, g**2)
    assert opt.t == 0


def test_coupled_weight_decay_adds_to_gradient():
    p = arr(2.0)
    opt = ADOPT([p], lr=0.5, weight_decay=0.1, decoupled=False)
    opt.step([arr(1.0)])
    np.testing.assert_allclose(opt.v[0], arr(1.2**2))
    np.testing.assert_allclose(p, arr(2.0))


def test_decoupled_weight_decay_scales_parameters():
    p = arr(2.0)
    opt = ADOPT([p], lr=0.5, weight_decay=0.1, decoupled=True)
    opt.step([arr(1.0)])
    np.testing.assert_allclose(p, arr(2.0 * (1 - 0.05)))
    np.testing.assert_allclose(opt.v[0], arr(1.0))


def test_second_step_hand_computed():
    p = arr(1.0)
    opt = ADOPT([p], lr=0.1, betas=(0.9, 0.99), eps=1e-6)
    opt.step([arr(2.0)])
    opt.step([arr(1.0)])
    # normalised 1/sqrt(4) = 0.5; m = 0.1 * 0.5; theta = 1 - 0.1 * 0.05
    np.testing.assert_allclose(opt.m[0], arr(0.05))
    np.testing.assert_allclose(p, arr(0.995))
    np.testing.assert_allclose(opt.v[0], arr(0.99 * 4 + 0.01 * 1))
    assert opt.t == 1


def test_normalizer_excludes_current_gradient():
    p = arr(0.0)
    opt = ADOPT([p], lr=1.0, betas=(0.9, 0.5), clip=None)
    opt.step([arr(1.0)])
    opt.step([arr(100.0)])
    # ADOPT divides by sqrt(v_0) = 1, not by sqrt(0.5 + 0.5 * 100^2) as Adam would.
    np.testing.assert_allclose(opt.m[0], arr(10.0))
    np.testing.assert_allclose(p, arr(-10.0))
    np.testing.assert_allclose(opt.v[0], arr(0.5 + 0.5 * 10000.0))


def test_eps_floor_on_denominator():
    p = arr(0.0)
    opt = ADOPT([p], lr=1.0, betas=(0.5, 0.9), eps=1e-2, clip=None)
    opt.step([arr(0.0)])
    opt.step([arr(1e-3)])
    np.testing.assert_allclose(opt.m[0], arr(0.5 * 0.1))


def _run_constant(clip, steps):
    # beta2 = 1 keeps v at v_0 = 1e-4, so each normalised gradient is 1 / 0.01 = 100.
    p = arr(0.0)
    opt = ADOPT([p], lr=0.01, betas=(0.0, 1.0), clip=clip)
    opt.step([arr(0.01)])
    for _ in range(steps):
        opt.step([arr(1.0)])
    return p


def test_clipping_at_step_power():
    p = _run_constant(lambda t: t**0.25, 16)
    expected = -0.01 * sum(t**0.25 for t in range(1, 17))
    np.testing.assert_allclose(p, arr(expected))


def test_no_clip_when_disabled():
    p = _run_constant(None, 3)
    np.testing.assert_allclose(p, arr(-0.01 * 100 * 3))


def test_momentum_accumulates():
    p = arr(0.0)
    opt = ADOPT([p], lr=1.0, betas=(0.5, 1.0), clip=None)
    opt.step([arr(2.0)])
    ms = []
    for _ in range(3):
        opt.step([arr(1.0)])
        ms.append(float(opt.m[0][0]))
    assert ms == pytest.approx([0.25, 0.375, 0.4375])
    np.testing.assert_allclose(p, arr(-(0.25 + 0.375 + 0.4375)))


def test_second_moment_after_two_steps():
    p = arr(0.0)
    opt = ADOPT([p], lr=0.1, betas=(0.9, 0.9))
    for g in (2.0, 1.0, 3.0):
        opt.step([arr(g)])
    np.testing.assert_allclose(opt.v[0], arr(0.9 * (0.9 * 4 + 0.1 * 1) + 0.1 * 9))


def test_converges_on_quadratic():
    target = arr(3.0, -1.0, 0.5)
    theta = np.zeros(3)
    opt = ADOPT([theta], lr=0.02, betas=(0.9, 0.999))
    for _ in range(3000):
        opt.step([theta - target])
    np.testing.assert_allclose(theta, target, atol=0.05)
