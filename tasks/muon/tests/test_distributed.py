"""Distributed Muon (ZeRO-1) against closed forms and against single-device Muon."""

import math

import numpy as np
from muon import Muon, distributed_muon_step
from muon_closed_forms import TOL, p5, rect_diag, unit


def _shards(flat, sizes):
    bounds = np.cumsum([0] + sizes)
    return [flat[bounds[r] : bounds[r + 1]].copy() for r in range(len(sizes))]


def test_distributed_first_step_closed_form():
    shape = (2, 3)
    sizes = [2, 3, 1]
    W_sh = _shards(np.ones(6), sizes)
    B_sh = _shards(np.zeros(6), sizes)
    # mean of the ranks' gradients is diag(1, -2)
    grads = [rect_diag([3.0, 0.0], shape), rect_diag([0.0, -6.0], shape), np.zeros(shape)]
    distributed_muon_step(W_sh, B_sh, grads, shape, lr=0.1, momentum=0.5, weight_decay=0.2)
    O = rect_diag(p5(unit([1.0, -2.0])), shape)
    expected = 0.98 - 0.1 * 0.2 * math.sqrt(3.0) * O.reshape(-1)
    np.testing.assert_allclose(np.concatenate(W_sh), expected, **TOL)
    np.testing.assert_allclose(np.concatenate(B_sh), rect_diag([1.0, -2.0], shape).reshape(-1))
    assert [len(s) for s in W_sh] == sizes


def test_distributed_momentum_in_shards():
    shape = (2, 2)
    sizes = [1, 3]
    W_sh = _shards(np.zeros(4), sizes)
    B_sh = _shards(np.zeros(4), sizes)
    mu = 0.5
    distributed_muon_step(W_sh, B_sh, [np.diag([2.0, 0.0]), np.zeros(shape)], shape, lr=1.0, momentum=mu, weight_decay=0.0)
    distributed_muon_step(W_sh, B_sh, [np.diag([0.0, 1.0]), np.diag([0.0, 1.0])], shape, lr=1.0, momentum=mu, weight_decay=0.0)
    np.testing.assert_allclose(np.concatenate(B_sh), [0.5, 0.0, 0.0, 1.0])
    m2 = np.array([0.25, 1.5])
    W = np.concatenate(W_sh).reshape(shape)
    np.testing.assert_allclose(np.diag(W), -0.2 * math.sqrt(2.0) * (np.array([p5(1.0), 0.0]) + p5(unit(m2))), **TOL)


def test_distributed_matches_single_device():
    rng = np.random.default_rng(7)
    shape = (4, 5)
    sizes = [7, 0, 6, 7]
    W0 = rng.normal(size=shape)
    W = W0.copy()
    single = Muon([W], lr=0.05, momentum=0.9, weight_decay=0.1)
    W_sh = _shards(W0.reshape(-1), sizes)
    B_sh = _shards(np.zeros(20), sizes)
    for _ in range(3):
        grads = [rng.normal(size=shape) for _ in sizes]
        single.step([np.mean(grads, axis=0)])
        distributed_muon_step(W_sh, B_sh, grads, shape, lr=0.05, momentum=0.9, weight_decay=0.1)
    np.testing.assert_allclose(np.concatenate(W_sh).reshape(shape), W, **TOL)
