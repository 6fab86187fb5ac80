"""C-Lion steps against values worked out by hand."""

import numpy as np
from cautious import CautiousLion


def arr(*values):
    return np.array(values, dtype=float)


def test_first_step_signs_with_rescaling():
    w = arr(1.0, 1.0, 1.0)
    opt = CautiousLion([w], lr=0.1)
    opt.step([arr(3.0, -0.01, 2.0)])
    # m = 0: u = sign(g), all three agree, scale 3 / 4
    np.testing.assert_allclose(w, arr(1.0, 1.0, 1.0) - 0.1 * 0.75 * arr(1.0, -1.0, 1.0))


def test_momentum_update_uses_beta2():
    w = np.zeros(2)
    opt = CautiousLion([w], lr=0.1, betas=(0.9, 0.99))
    opt.step([arr(2.0, -1.0)])
    np.testing.assert_allclose(opt.m[0], arr(0.02, -0.01))
    opt.step([arr(1.0, 1.0)])
    np.testing.assert_allclose(opt.m[0], arr(0.99 * 0.02 + 0.01, 0.99 * -0.01 + 0.01))


def test_second_step_interpolates_with_beta1_and_masks():
    w = np.zeros(3)
    opt = CautiousLion([w], lr=0.1, betas=(0.9, 0.99))
    opt.step([arr(1.0, 1.0, 1.0)])
    after_first = w.copy()
    np.testing.assert_allclose(after_first, -0.075 * np.ones(3))
    opt.step([arr(-0.05, -1.0, 2.0)])
    # m = 0.01: c = 0.9 * 0.01 + 0.1 * g = (0.004, -0.091, 0.209), u = (+, -, +)
    # g signs (-, -, +): the first coordinate disagrees; two agree, scale 3 / 3
    np.testing.assert_allclose(w, after_first - 0.1 * arr(0.0, -1.0, 1.0))


def test_weight_decay_before_update():
    w = arr(2.0)
    opt = CautiousLion([w], lr=0.5, weight_decay=0.5)
    opt.step([arr(1.0)])
    # decay first: 2 * (1 - 0.25) = 1.5; then the masked sign step 0.5 * (1/2)
    np.testing.assert_allclose(w, arr(1.25))


def test_weight_decay_alone():
    w = arr(3.0, -1.0)
    opt = CautiousLion([w], lr=0.1, weight_decay=0.2)
    for _ in range(3):
        opt.step([arr(0.0, 0.0)])
    np.testing.assert_allclose(w, arr(3.0, -1.0) * 0.98**3)


def test_plain_lion_when_not_cautious():
    w = np.zeros(3)
    opt = CautiousLion([w], lr=0.1, betas=(0.9, 0.99), cautious=False)
    opt.step([arr(1.0, 1.0, 1.0)])
    opt.step([arr(-0.05, -1.0, 2.0)])
    np.testing.assert_allclose(w, -0.1 * np.ones(3) - 0.1 * arr(1.0, -1.0, 1.0))


def test_every_parameter_and_its_own_scale():
    ws = [np.zeros(1), np.zeros((2, 2))]
    opt = CautiousLion(ws, lr=1.0)
    opt.step([arr(-2.0), arr(1.0, -1.0, 3.0, 0.0).reshape(2, 2)])
    np.testing.assert_allclose(ws[0], arr(0.5))
    # zero gradient coordinate: sign 0; three agree of four, scale 1
    np.testing.assert_allclose(ws[1], -arr(1.0, -1.0, 1.0, 0.0).reshape(2, 2))


def test_converges_on_quadratic():
    target = arr(0.3, -0.1, 0.25)
    w = np.zeros(3)
    opt = CautiousLion([w], lr=0.003, betas=(0.9, 0.99))
    for _ in range(1000):
        opt.step([w - target])
    np.testing.assert_allclose(w, target, atol=0.02)
