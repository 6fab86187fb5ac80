"""Muon steps (with update-RMS matching and weight decay) and the AdamW part, worked out by hand."""

import math

import numpy as np
import pytest
from muon import Muon, adjusted_lr
from muon_closed_forms import TOL, p5, random_orthogonal, rect_diag, unit


def test_adjusted_lr_values():
    assert adjusted_lr(0.5, (4, 9)) == pytest.approx(0.5 * 0.2 * 3.0)
    assert adjusted_lr(0.5, (9, 4)) == pytest.approx(0.3)
    assert adjusted_lr(2.0, (16, 16)) == pytest.approx(1.6)
    assert adjusted_lr(1.0, (25, 3, 3, 3)) == pytest.approx(1.0)


@pytest.mark.parametrize("shape", [(6, 10), (12, 5), (7, 7)])
def test_matched_update_rms_is_point_two(shape):
    # A full-rank orthogonal U V^T has RMS sqrt(1 / max(A, B)); matching scales it to 0.2.
    U, _, Vt = np.linalg.svd(np.random.default_rng(5).normal(size=shape), full_matrices=False)
    update = adjusted_lr(1.0, shape) * (U @ Vt)
    assert np.sqrt(np.mean(update**2)) == pytest.approx(0.2)


# ---------------------------------------------------------------- Muon step


def test_first_step_closed_form():
    d = np.array([1.0, -2.0])
    W = np.ones((2, 4))
    opt = Muon([W], lr=0.1, momentum=0.9, weight_decay=0.0)
    opt.step([rect_diag(d, (2, 4))])
    # Nesterov input (1 + mu) G has the same direction as G.
    O = rect_diag(p5(unit(d)), (2, 4))
    np.testing.assert_allclose(W, np.ones((2, 4)) - 0.1 * 0.2 * 2.0 * O, **TOL)


def test_momentum_buffer_accumulates():
    W = np.zeros((2, 2))
    opt = Muon([W], lr=0.1, momentum=0.5)
    grads = [np.diag([1.0, 0.0]), np.diag([0.0, 2.0]), np.diag([4.0, 4.0])]
    for g in grads:
        opt.step([g])
    np.testing.assert_allclose(opt.B[0], np.diag([0.25 + 4.0, 1.0 + 4.0]))


@pytest.mark.parametrize("nesterov", [True, False])
def test_two_steps_momentum_direction(nesterov):
    mu = 0.5
    W = np.zeros((2, 2))
    opt = Muon([W], lr=1.0, momentum=mu, nesterov=nesterov, weight_decay=0.0)
    opt.step([np.diag([1.0, 0.0])])
    opt.step([np.diag([0.0, 1.0])])
    np.testing.assert_allclose(opt.B[0], np.diag([0.5, 1.0]))
    first = np.array([p5(1.0), 0.0])
    if nesterov:
        m2 = np.array([0.25, 1.5])  # mu * B_2 + G_2 with B_2 = (0.5, 1)
    else:
        m2 = np.array([0.5, 1.0])  # B_2
    second = p5(unit(m2))
    np.testing.assert_allclose(np.diag(W), -0.2 * math.sqrt(2.0) * (first + second), **TOL)
    assert W[0, 1] == 0.0 and W[1, 0] == 0.0


def test_decoupled_weight_decay_uses_plain_lr():
    W = np.full((2, 8), 2.0)
    opt = Muon([W], lr=0.1, momentum=0.0, weight_decay=0.5)
    opt.step([rect_diag([3.0], (2, 8))])
    O = rect_diag([p5(1.0)], (2, 8))
    expected = 2.0 * (1.0 - 0.1 * 0.5) - 0.1 * 0.2 * math.sqrt(8.0) * O
    np.testing.assert_allclose(W, expected, **TOL)


def test_weight_decay_alone_with_zero_gradient():
    W = np.full((3, 3), 4.0)
    opt = Muon([W], lr=0.2, weight_decay=0.25)
    for _ in range(2):
        opt.step([np.zeros((3, 3))])
    np.testing.assert_allclose(W, np.full((3, 3), 4.0 * 0.95**2), **TOL)


def test_orthogonal_gradient_update_rms():
    # G = Q orthogonal: all normalised singular values are 1/sqrt(n), so O = p5(1/sqrt(n)) Q.
    n = 9
    Q = random_orthogonal(n, 6)
    W = np.zeros((n, n))
    opt = Muon([W], lr=1.0, momentum=0.0, weight_decay=0.0)
    opt.step([Q])
    np.testing.assert_allclose(W, -0.2 * 3.0 * p5(1.0 / 3.0) * Q, **TOL)
    assert np.sqrt(np.mean(W**2)) == pytest.approx(0.2 * p5(1.0 / 3.0))


def test_step_updates_every_matrix():
    Ws = [np.zeros((2, 3)), np.zeros((3, 2))]
    opt = Muon(Ws, lr=1.0, momentum=0.0, weight_decay=0.0)
    opt.step([rect_diag([1.0, 1.0], (2, 3)), rect_diag([2.0], (3, 2))])
    np.testing.assert_allclose(Ws[0], -0.2 * math.sqrt(3) * rect_diag(p5(unit([1.0, 1.0])), (2, 3)), **TOL)
    np.testing.assert_allclose(Ws[1], -0.2 * math.sqrt(3) * rect_diag([p5(1.0)], (3, 2)), **TOL)


# ---------------------------------------------------------------- AdamW part


def test_adamw_first_step_on_vector():
    b = np.array([1.0, -1.0, 0.5])
    opt = Muon([b], lr=0.1, weight_decay=0.2, adamw_eps=1e-12)
    opt.step([np.array([0.3, -2.0, 1e-3])])
    # Bias-corrected first step: m_hat / sqrt(v_hat) = sign(g); decay (1 - 0.1 * 0.2).
    np.testing.assert_allclose(b, np.array([0.98 - 0.1, -0.98 + 0.1, 0.49 - 0.1]))


def test_adamw_moments():
    b = np.zeros(2)
    opt = Muon([b], lr=0.1, adamw_betas=(0.5, 0.75))
    opt.step([np.array([2.0, -4.0])])
    opt.step([np.array([1.0, 0.0])])
    np.testing.assert_allclose(opt.m[0], np.array([0.5 * 1.0 + 0.5 * 1.0, 0.5 * -2.0]))
    np.testing.assert_allclose(opt.v[0], np.array([0.75 * 1.0 + 0.25 * 1.0, 0.75 * 4.0]))


def test_adamw_second_step_hand_computed():
    b = np.array([0.0])
    opt = Muon([b], lr=0.1, weight_decay=0.0, adamw_betas=(0.5, 0.75), adamw_eps=1e-3)
    opt.step([np.array([2.0])])
    opt.step([np.array([1.0])])
    # m = 1.0, v = 1.0; m_hat = 1 / 0.75, v_hat = 1.0 / (1 - 0.5625)
    first = 2.0 / (2.0 + 1e-3)
    second = (1.0 / 0.75) / (math.sqrt(1.0 / 0.4375) + 1e-3)
    np.testing.assert_allclose(b, np.array([-0.1 * (first + second)]))


def test_mixed_parameters_share_step_count():
    W = np.zeros((2, 2))
    b1 = np.zeros(1)
    b2 = np.zeros(1)
    opt = Muon([W, b1, b2], lr=0.1, weight_decay=0.0, adamw_betas=(0.5, 0.5), adamw_eps=0.0)
    opt.step([np.eye(2), np.array([1.0]), np.array([2.0])])
    opt.step([np.eye(2), np.array([1.0]), np.array([2.0])])
    # constant gradients: bias-corrected Adam moves by exactly lr per step
    np.testing.assert_allclose(b1, [-0.2])
    np.testing.assert_allclose(b2, [-0.2])
    np.testing.assert_allclose(opt.m[1], [0.75])
    assert opt.t == 2
    np.testing.assert_allclose(W, -0.1 * 0.2 * math.sqrt(2) * 2 * p5(unit([1.0, 1.0])[0]) * np.eye(2), **TOL)
