"""Tests for Forgetting Attention against hand-worked cases, known special cases (causal
softmax attention, ALiBi) and an independent product-form implementation."""

import numpy as np
import pytest
from fox import (
    decay_bias,
    decode_step,
    empty_cache,
    forget_gate_log,
    forgetting_attention,
    forgetting_attention_blockwise,
    forgetting_attention_recurrent,
    fox_attention_layer,
)


def naive_fox(q, k, v, f):
    """o_i = Σ_{j≤i} F_ij e^{q_i·k_j/√d} v_j / Σ_{j≤i} F_ij e^{q_i·k_j/√d}, F_ij = Π_{l=j+1}^{i} f_l."""
    T, d = q.shape
    out = np.zeros((T, v.shape[1]))
    for i in range(T):
        w = np.array([np.prod(f[j + 1 : i + 1]) * np.exp(q[i] @ k[j] / np.sqrt(d)) for j in range(i + 1)])
        out[i] = w @ v[: i + 1] / w.sum()
    return out


def causal_softmax_attention(q, k, v):
    T, d = q.shape
    s = q @ k.T / np.sqrt(d)
    out = np.zeros((T, v.shape[1]))
    for i in range(T):
        w = np.exp(s[i, : i + 1] - s[i, : i + 1].max())
        out[i] = w @ v[: i + 1] / w.sum()
    return out


def random_problem(T=7, d=4, d_v=3, seed=0):
    rng = np.random.default_rng(seed)
    q, k, v = rng.normal(size=(T, d)), rng.normal(size=(T, d)), rng.normal(size=(T, d_v))
    f = rng.uniform(0.2, 1.0, size=T)
    return q, k, v, f


# Hand case (d = 1): q = [1, 1], k = [0, 0], f_2 = 1/2, v = [3, 6].
# Row 2 weights ∝ [f_2 e^0, e^0] = [1/2, 1] -> [1/3, 2/3]; o = [3, 1 + 4] = [3, 5].
HQ = np.array([[1.0], [1.0]])
HK = np.zeros((2, 1))
HV = np.array([[3.0], [6.0]])
HLOGF = np.log([0.9, 0.5])


# ---- forget gate and decay bias -------------------------------------------------


def test_forget_gate_hand():
    x = np.array([[1.0, 2.0], [0.0, -1.0], [2.0, 2.0]])
    w = np.array([0.5, -0.25])
    log_f = forget_gate_log(x, w, 1.0)
    # z = [1, 1.25, 1.5]
    np.testing.assert_allclose(log_f, np.log(1.0 / (1.0 + np.exp(-np.array([1.0, 1.25, 1.5])))))


def test_forget_gate_extremes_are_finite():
    x = np.array([[1.0]])
    np.testing.assert_allclose(forget_gate_log(x, np.array([-1000.0]), 0.0), [-1000.0])
    np.testing.assert_allclose(forget_gate_log(x, np.array([1000.0]), 0.0), [0.0], atol=1e-300)
    np.testing.assert_allclose(forget_gate_log(x, np.array([0.0]), 0.0), [np.log(0.5)])


def test_forget_gate_per_head():
    rng = np.random.default_rng(1)
    x, W, b = rng.normal(size=(5, 3)), rng.normal(size=(3, 2)), np.array([2.0, -1.0])
    log_f = forget_gate_log(x, W, b)
    assert log_f.shape == (5, 2)
    np.testing.assert_allclose(np.exp(log_f[:, 1]), 1.0 / (1.0 + np.exp(-(x @ W[:, 1] - 1.0))))


def test_decay_bias_hand():
    D = decay_bias(np.array([-1.0, -2.0, -3.0]))
    expected = np.array([[0.0, -np.inf, -np.inf], [-2.0, 0.0, -np.inf], [-5.0, -3.0, 0.0]])
    np.testing.assert_array_equal(D, expected)


def test_decay_bias_is_log_of_products():
    f = np.array([0.3, 0.9, 0.5, 0.8])
    D = decay_bias(np.log(f))
    for i in range(4):
        for j in range(4):
            if j <= i:
                assert D[i, j] == pytest.approx(np.log(np.prod(f[j + 1 : i + 1])), abs=1e-12)
            else:
                assert D[i, j] == -np.inf


# ---- quadratic form -------------------------------------------------------------


def test_attention_hand():
    np.testing.assert_allclose(forgetting_attention(HQ, HK, HV, HLOGF)[:, 0], [3.0, 5.0])


def test_attention_scale_hand():
    # d = 4: q_2·k_1 = 2 ln 2, divided by √4 -> logit ln 2; q_2·k_2 = 0; no forgetting
    q = np.array([[0.0, 0.0, 0.0, 0.0], [np.log(2.0)] * 4])
    k = np.array([[1.0, 1.0, 0.0, 0.0], [0.0, 0.0, 0.0, 0.0]])
    v = np.array([[1.0], [0.0]])
    out = forgetting_attention(q, k, v, np.zeros(2))
    # row 2 weights ∝ [e^{ln 2}, e^0] = [2, 1]
    np.testing.assert_allclose(out[:, 0], [1.0, 2.0 / 3.0])


def test_no_forgetting_is_causal_softmax_attention():
    q, k, v, _ = random_problem(seed=2)
    out = forgetting_attention(q, k, v, np.zeros(7))
    np.testing.assert_allclose(out, causal_softmax_attention(q, k, v), rtol=1e-10)


def test_matches_product_form():
    q, k, v, f = random_problem(seed=3)
    np.testing.assert_allclose(forgetting_attention(q, k, v, np.log(f)), naive_fox(q, k, v, f), rtol=1e-10)


def test_constant_gate_is_alibi():
    # f_t = e^{-m}: D_ij = -m (i - j), the ALiBi bias with slope m
    q, k, v, _ = random_problem(seed=4)
    m, T, d = 0.7, 7, 4
    s = q @ k.T / np.sqrt(d) - m * (np.arange(T)[:, None] - np.arange(T)[None, :])
    expected = np.zeros((T, 3))
    for i in range(T):
        w = np.exp(s[i, : i + 1])
        expected[i] = w @ v[: i + 1] / w.sum()
    np.testing.assert_allclose(forgetting_attention(q, k, v, np.full(T, -m)), expected, rtol=1e-10)


def test_full_forgetting_attends_to_self():
    q, k, v, _ = random_problem(seed=5)
    np.testing.assert_allclose(forgetting_attention(q, k, v, np.full(7, -1e4)), v, atol=1e-12)


def test_first_gate_has_no_effect():
    q, k, v, f = random_problem(seed=6)
    a = forgetting_attention(q, k, v, np.log(f))
    f[0] = 1e-3
    np.testing.assert_allclose(forgetting_attention(q, k, v, np.log(f)), a, rtol=1e-12)


def test_large_logits_are_stable():
    q, k, v, f = random_problem(seed=7)
    out = forgetting_attention(q * 40, k * 40, v, np.log(f))
    assert np.all(np.isfinite(out))
    np.testing.assert_allclose(out[0], v[0])
    # each output is a convex combination of the values seen so far
    assert np.all(out <= np.maximum.accumulate(v, axis=0) + 1e-9)


# ---- recurrent (decoding) form ----------------------------------------------------


def test_recurrent_hand():
    np.testing.assert_allclose(forgetting_attention_recurrent(HQ, HK, HV, HLOGF)[:, 0], [3.0, 5.0])


def test_recurrent_hand_three_steps():
    # d = 1, zero keys: weights of row 3 ∝ [f2 f3, f3, 1] = [0.25, 0.5, 1]
    q, k = np.ones((3, 1)), np.zeros((3, 1))
    v = np.array([[7.0], [0.0], [0.0]])
    out = forgetting_attention_recurrent(q, k, v, np.log([0.1, 0.5, 0.5]))
    np.testing.assert_allclose(out[:, 0], [7.0, 7.0 * 0.5 / 1.5, 7.0 * 0.25 / 1.75])


def test_decode_step_cache_biases_hand():
    cache = empty_cache(1, 1)
    for x, lf in zip([1.0, 2.0, 3.0], [-1.0, -2.0, -3.0]):
        _, cache = decode_step(cache, np.array([0.0]), np.array([x]), np.array([10 * x]), lf)
    keys, values, bias = cache
    np.testing.assert_allclose(bias, [-5.0, -3.0, 0.0])
    np.testing.assert_allclose(keys[:, 0], [1.0, 2.0, 3.0])
    np.testing.assert_allclose(values[:, 0], [10.0, 20.0, 30.0])


def test_decode_step_hand():
    # two cached tokens (zero keys, biases log [1/2, 1]), then a third with f = 1/2 and q·k = 0
    cache = (np.zeros((2, 1)), np.array([[4.0], [8.0]]), np.log([0.5, 1.0]))
    o, (_, _, bias) = decode_step(cache, np.array([1.0]), np.array([0.0]), np.array([2.0]), np.log(0.5))
    # biases become log [1/4, 1/2, 1]: weights [1/7, 2/7, 4/7]
    np.testing.assert_allclose(bias, np.log([0.25, 0.5, 1.0]))
    np.testing.assert_allclose(o, [(4.0 + 16.0 + 8.0) / 7.0])


def test_recurrent_matches_product_form():
    q, k, v, f = random_problem(seed=8)
    np.testing.assert_allclose(forgetting_attention_recurrent(q, k, v, np.log(f)), naive_fox(q, k, v, f), rtol=1e-10)


def test_recurrent_stable_and_no_forgetting():
    q, k, v, _ = random_problem(seed=9)
    out = forgetting_attention_recurrent(q * 40, k * 40, v, np.zeros(7))
    np.testing.assert_allclose(out, causal_softmax_attention(q * 40, k * 40, v), rtol=1e-9)


# ---- blockwise form --------------------------------------------------------------


def test_blockwise_hand():
    for block in (1, 2):
        out = forgetting_attention_blockwise(HQ, HK, HV, HLOGF, block)
        np.testing.assert_allclose(out[:, 0], [3.0, 5.0])


def test_blockwise_hand_three_steps():
    q, k = np.ones((3, 1)), np.zeros((3, 1))
    v = np.array([[7.0], [0.0], [0.0]])
    for block in (1, 2, 3):
        out = forgetting_attention_blockwise(q, k, v, np.log([0.1, 0.5, 0.5]), block)
        np.testing.assert_allclose(out[:, 0], [7.0, 7.0 * 0.5 / 1.5, 7.0 * 0.25 / 1.75])


@pytest.mark.parametrize("block", [1, 2, 3, 5, 7, 9])
def test_blockwise_matches_product_form(block):
    q, k, v, f = random_problem(seed=10)
    out = forgetting_attention_blockwise(q, k, v, np.log(f), block)
    np.testing.assert_allclose(out, naive_fox(q, k, v, f), rtol=1e-10)


def test_blockwise_stable_large_logits():
    # later key blocks carry much larger logits than the first: needs the running max
    q, k, v, _ = random_problem(seed=11)
    k = k * np.arange(1, 8)[:, None] * 30
    out = forgetting_attention_blockwise(q * 10, k, v, np.zeros(7), 2)
    assert np.all(np.isfinite(out))
    np.testing.assert_allclose(out, causal_softmax_attention(q * 10, k, v), rtol=1e-9, atol=1e-12)


def test_three_forms_agree():
    q, k, v, f = random_problem(T=12, d=8, d_v=5, seed=12)
    a = forgetting_attention(q, k, v, np.log(f))
    np.testing.assert_allclose(forgetting_attention_recurrent(q, k, v, np.log(f)), a, rtol=1e-10)
    np.testing.assert_allclose(forgetting_attention_blockwise(q, k, v, np.log(f), 4), a, rtol=1e-10)


# ---- multi-head layer -------------------------------------------------------------


def test_layer_matches_per_head_product_form():
    rng = np.random.default_rng(13)
    T, dm, H, dh = 5, 6, 2, 3
    x = rng.normal(size=(T, dm))
    Wq, Wk, Wv = (rng.normal(size=(dm, H * dh)) for _ in range(3))
    Wf, bf = rng.normal(size=(dm, H)), np.array([1.0, -0.5])
    Wo = rng.normal(size=(H * dh, dm))
    heads = []
    for h in range(H):
        cols = slice(h * dh, (h + 1) * dh)
        f = 1.0 / (1.0 + np.exp(-(x @ Wf[:, h] + bf[h])))
        heads.append(naive_fox(x @ Wq[:, cols], x @ Wk[:, cols], x @ Wv[:, cols], f))
    expected = np.concatenate(heads, axis=1) @ Wo
    np.testing.assert_allclose(fox_attention_layer(x, Wq, Wk, Wv, Wf, bf, Wo, H), expected, rtol=1e-9)


def test_layer_hand_single_head():
    # one head, identity projections: reduces to the hand case above with gate σ(z)
    x = np.array([[1.0], [1.0]])
    Wq, Wk, Wv, Wo = np.array([[1.0]]), np.array([[0.0]]), np.array([[6.0]]), np.array([[0.5]])
    # f_2 = σ(0) = 1/2 with Wf = 0, bf = 0: row 2 weights [1/3, 2/3] over v = [6, 6]
    out = fox_attention_layer(x, Wq, Wk, Wv, np.zeros((1, 1)), np.zeros(1), Wo, 1)
    np.testing.assert_allclose(out[:, 0], [3.0, 3.0])
    x = np.array([[1.0], [-1.0]])
    out = fox_attention_layer(x, Wq, Wk, Wv, np.zeros((1, 1)), np.zeros(1), Wo, 1)
    # values [6, -6]: row 2 = 0.5 * (6/3 - 12/3)
    np.testing.assert_allclose(out[:, 0], [3.0, -1.0])
