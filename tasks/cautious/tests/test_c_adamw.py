"""C-AdamW steps against values worked out by hand."""

import numpy as np
from cautious import CautiousAdamW


def arr(*values):
    return np.array(values, dtype=float)


def test_first_step_all_agree():
    w = arr(1.0, -1.0, 0.5)
    opt = CautiousAdamW([w], lr=0.1, eps=1e-3)
    g = arr(2.0, -0.5, 0.25)
    opt.step([g])
    # m_hat = g, sqrt(v_hat) = |g|: every coordinate agrees, d / (nnz + 1) = 3 / 4
    np.testing.assert_allclose(w, arr(1.0, -1.0, 0.5) - 0.1 * 0.75 * g / (np.abs(g) + 1e-3))


def test_first_step_zero_gradient_coordinate():
    w = arr(0.0, 0.0)
    opt = CautiousAdamW([w], lr=1.0, eps=1e-8)
    opt.step([arr(4.0, 0.0)])
    # one agreeing coordinate of two: scale 2 / 2
    np.testing.assert_allclose(w, arr(-4.0 / (4.0 + 1e-8), 0.0))


def test_second_step_masks_disagreeing_coordinate():
    w = np.zeros(4)
    b1, b2, eps = 0.5, 0.5, 1e-3
    opt = CautiousAdamW([w], lr=0.1, betas=(b1, b2), eps=eps)
    g1 = np.ones(4)
    g2 = arr(-3.0, 0.5, 1.0, -0.1)
    opt.step([g1])
    after_first = w.copy()
    np.testing.assert_allclose(after_first, -0.1 * 0.8 / (1.0 + eps) * np.ones(4))
    opt.step([g2])
    m = arr(-1.25, 0.5, 0.75, 0.2)  # 0.5 * 0.5 + 0.5 * g2
    v = arr(4.75, 0.375, 0.75, 0.255)  # 0.5 * 0.5 + 0.5 * g2^2
    np.testing.assert_allclose(opt.m[0], m)
    np.testing.assert_allclose(opt.v[0], v)
    u = (m / 0.75) / (np.sqrt(v / 0.75) + eps)
    # signs of u: (-, +, +, +); of g2: (-, +, +, -): three agree, scale 4 / 4
    expected = after_first - 0.1 * u * arr(1.0, 1.0, 1.0, 0.0)
    np.testing.assert_allclose(w, expected)
    assert w[3] == after_first[3]


def test_moments_are_not_masked():
    w = np.zeros(2)
    opt = CautiousAdamW([w], lr=0.1, betas=(0.9, 0.99))
    opt.step([arr(1.0, 1.0)])
    opt.step([arr(-5.0, 1.0)])
    np.testing.assert_allclose(opt.m[0], arr(0.09 - 0.5, 0.09 + 0.1))
    np.testing.assert_allclose(opt.v[0], arr(0.0099 + 0.25, 0.0099 + 0.01))


def test_weight_decay_after_masked_update():
    w = arr(2.0)
    opt = CautiousAdamW([w], lr=0.5, eps=1e-12, weight_decay=0.5)
    opt.step([arr(1.0)])
    # masked step: 2 - 0.5 * (1/2) * 1 = 1.75; then decay by lr * wd: 1.75 * (1 - 0.25)
    np.testing.assert_allclose(w, arr(1.3125))


def test_weight_decay_alone():
    w = arr(3.0, -1.0)
    opt = CautiousAdamW([w], lr=0.1, weight_decay=0.2)
    for _ in range(4):
        opt.step([arr(0.0, 0.0)])
    np.testing.assert_allclose(w, arr(3.0, -1.0) * 0.98**4)


def test_plain_adamw_when_not_cautious():
    w = np.zeros(4)
    opt = CautiousAdamW([w], lr=0.1, betas=(0.5, 0.5), eps=1e-3, cautious=False)
    opt.step([np.ones(4)])
    opt.step([arr(-3.0, 0.5, 1.0, -0.1)])
    m = arr(-1.25, 0.5, 0.75, 0.2)
    v = arr(4.75, 0.375, 0.75, 0.255)
    u = (m / 0.75) / (np.sqrt(v / 0.75) + 1e-3)
    np.testing.assert_allclose(w, -0.1 / (1.0 + 1e-3) - 0.1 * u)


def test_every_parameter_and_its_own_scale():
    ws = [np.zeros(1), np.zeros((2, 2))]
    opt = CautiousAdamW(ws, lr=1.0, eps=1e-12)
    opt.step([arr(1.0), arr(1.0, -1.0, 1.0, -1.0).reshape(2, 2)])
    np.testing.assert_allclose(ws[0], arr(-0.5))
    np.testing.assert_allclose(ws[1], -0.8 * arr(1.0, -1.0, 1.0, -1.0).reshape(2, 2))
    assert opt.t == 1


def test_converges_on_quadratic():
    target = arr(3.0, -1.0, 0.5, 2.0)
    w = np.zeros(4)
    opt = CautiousAdamW([w], lr=0.02, betas=(0.9, 0.999))
    for _ in range(2000):
        opt.step([w - target])
    np.testing.assert_allclose(w, target, atol=0.05)
