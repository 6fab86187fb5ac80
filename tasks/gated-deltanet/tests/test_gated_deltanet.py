"""Tests for the gated delta rule: hand-worked steps, closed forms of special cases,
and agreement of the recurrent and chunkwise forms with an independently written rule."""

import numpy as np
import pytest
from gated_deltanet import (
    chunk_decay,
    chunk_step,
    gated_delta_chunkwise,
    gated_delta_recurrent,
    gated_deltanet_head,
    gated_rmsnorm,
    gates,
    l2_normalize,
    short_conv,
    strictly_lower_A,
    ut_transform,
)

# Two hand-worked steps (d_k = 2, d_v = 1):
#   t=1: k=(1,0), v=2, beta=0.5, alpha=1   -> S1 = [1, 0];          q=(1,1) -> o1 = 1
#   t=2: k=(.6,.8), v=1, beta=1, alpha=0.5 -> S1*0.5*(I - k k^T) = [0.32, -0.24]
#        + v k^T = [0.6, 0.8]              -> S2 = [0.92, 0.56];    q=(1,0) -> o2 = 0.92
HQ = np.array([[1.0, 1.0], [1.0, 0.0]])
HK = np.array([[1.0, 0.0], [0.6, 0.8]])
HV = np.array([[2.0], [1.0]])
HLOGA = np.log([1.0, 0.5])
HBETA = np.array([0.5, 1.0])


def random_problem(T=7, d_k=4, d_v=3, seed=0):
    rng = np.random.default_rng(seed)
    Q = rng.normal(size=(T, d_k))
    K = rng.normal(size=(T, d_k))
    K /= np.linalg.norm(K, axis=1, keepdims=True)
    Q /= np.linalg.norm(Q, axis=1, keepdims=True)
    V = rng.normal(size=(T, d_v))
    log_alpha = np.log(rng.uniform(0.3, 1.0, size=T))
    beta = rng.uniform(0.05, 1.0, size=T)
    S0 = rng.normal(size=(d_v, d_k))
    return Q, K, V, log_alpha, beta, S0


def error_correction_rule(Q, K, V, log_alpha, beta, S0=None):
    """S_t = α_t S_{t-1} + β_t (v_t − α_t S_{t-1} k_t) k_tᵀ: the same rule written as an
    online correction of the prediction S k toward v."""
    d_v, d_k = V.shape[1], K.shape[1]
    S = np.zeros((d_v, d_k)) if S0 is None else S0.copy()
    out = []
    for q, k, v, la, b in zip(Q, K, V, log_alpha, beta):
        a = np.exp(la)
        prediction = a * (S @ k)
        S = a * S + b * np.outer(v - prediction, k)
        out.append(S @ q)
    return np.array(out), S


# ---- normalisation and gates ------------------------------------------------


def test_l2_normalize_hand():
    np.testing.assert_allclose(l2_normalize(np.array([3.0, 4.0])), [0.6, 0.8], rtol=1e-6)
    small = np.array([3e-3, 4e-3])
    np.testing.assert_allclose(l2_normalize(small), small / np.sqrt(2.5e-5 + 1e-6), rtol=1e-12)
    np.testing.assert_allclose(l2_normalize(small, eps=0.0), [0.6, 0.8], rtol=1e-12)


def test_l2_normalize_rows():
    rng = np.random.default_rng(1)
    x = rng.normal(size=(2, 5, 4)) * 10
    y = l2_normalize(x)
    np.testing.assert_allclose(np.linalg.norm(y, axis=-1), 1.0, atol=1e-6)
    cos = np.sum(x * y, axis=-1) / np.linalg.norm(x, axis=-1)
    np.testing.assert_allclose(cos, 1.0, atol=1e-6)


def test_gates_hand():
    log_alpha, beta = gates(np.array([0.0, np.log(np.e - 1.0) - 1.0]), np.array([0.0, np.log(3.0)]), np.log(3.0), 1.0)
    # softplus(1) and softplus(log(e-1)) = 1, times -exp(A_log) = -3
    np.testing.assert_allclose(log_alpha, [-3.0 * np.log1p(np.e), -3.0])
    np.testing.assert_allclose(beta, [0.5, 0.75])


def test_gates_ranges():
    rng = np.random.default_rng(2)
    log_alpha, beta = gates(rng.normal(size=100) * 4, rng.normal(size=100) * 4, -0.5, 0.2)
    assert np.all(log_alpha < 0) and np.all((beta > 0) & (beta < 1))
    # larger pre-activation -> stronger decay (smaller alpha)
    la, _ = gates(np.array([-2.0, 0.0, 2.0]), np.zeros(3), 0.0, 0.0)
    assert la[0] > la[1] > la[2]


# ---- recurrent form -----------------------------------------------------------


def test_recurrent_hand():
    O, S = gated_delta_recurrent(HQ, HK, HV, HLOGA, HBETA)
    np.testing.assert_allclose(O[:, 0], [1.0, 0.92])
    np.testing.assert_allclose(S, [[0.92, 0.56]])


def test_delta_rule_overwrites_value():
    # beta = 1 and a unit key: after the step the memory returns exactly v for k
    rng = np.random.default_rng(3)
    S0 = rng.normal(size=(3, 4))
    k = l2_normalize(rng.normal(size=(1, 4)), eps=0.0)
    v = rng.normal(size=(1, 3))
    for la in (0.0, np.log(0.3)):
        _, S = gated_delta_recurrent(k, k, v, np.array([la]), np.array([1.0]), S0)
        np.testing.assert_allclose(S @ k[0], v[0], atol=1e-12)
        # directions orthogonal to k are only decayed
        w = rng.normal(size=4)
        w -= (w @ k[0]) * k[0]
        np.testing.assert_allclose(S @ w, np.exp(la) * (S0 @ w), atol=1e-12)


def test_beta_zero_is_pure_decay():
    Q, K, V, log_alpha, _, S0 = random_problem(seed=4)
    O, S = gated_delta_recurrent(Q, K, V, log_alpha, np.zeros(7), S0)
    gamma = np.exp(np.cumsum(log_alpha))
    np.testing.assert_allclose(S, gamma[-1] * S0, rtol=1e-12)
    np.testing.assert_allclose(O, gamma[:, None] * (Q @ S0.T), rtol=1e-12)


def test_orthogonal_keys_give_decayed_linear_attention():
    # with orthonormal keys S_{t-1} k_t = 0, so o_t = Σ_{i≤t} (γ_t/γ_i) β_i (k_i·q_t) v_i
    rng = np.random.default_rng(5)
    K = np.linalg.qr(rng.normal(size=(4, 4)))[0].T
    Q = rng.normal(size=(4, 4))
    V = rng.normal(size=(4, 2))
    log_alpha = np.log([0.9, 0.5, 0.7, 0.8])
    beta = np.array([0.3, 0.6, 0.9, 0.5])
    gamma = np.exp(np.cumsum(log_alpha))
    expected = np.array([sum(gamma[t] / gamma[i] * beta[i] * (K[i] @ Q[t]) * V[i] for i in range(t + 1)) for t in range(4)])
    O, _ = gated_delta_recurrent(Q, K, V, log_alpha, beta)
    np.testing.assert_allclose(O, expected, rtol=1e-10, atol=1e-12)
    O, _ = gated_delta_chunkwise(Q, K, V, log_alpha, beta, 4)
    np.testing.assert_allclose(O, expected, rtol=1e-10, atol=1e-12)


def test_recurrent_matches_error_correction_rule():
    Q, K, V, log_alpha, beta, S0 = random_problem(seed=6)
    O, S = gated_delta_recurrent(Q, K, V, log_alpha, beta, S0)
    O_ref, S_ref = error_correction_rule(Q, K, V, log_alpha, beta, S0)
    np.testing.assert_allclose(O, O_ref, rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(S, S_ref, rtol=1e-10, atol=1e-12)


def test_alpha_one_is_deltanet():
    # DeltaNet: S_t = S_{t-1} − β_t (S_{t-1} k_t − v_t) k_tᵀ
    Q, K, V, _, beta, S0 = random_problem(seed=7)
    S = S0.copy()
    expected = []
    for q, k, v, b in zip(Q, K, V, beta):
        S = S - b * np.outer(S @ k - v, k)
        expected.append(S @ q)
    O, S_rec = gated_delta_recurrent(Q, K, V, np.zeros(7), beta, S0)
    np.testing.assert_allclose(O, expected, rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(S_rec, S, rtol=1e-10, atol=1e-12)
    O, S_chunk = gated_delta_chunkwise(Q, K, V, np.zeros(7), beta, 3, S0)
    np.testing.assert_allclose(O, expected, rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(S_chunk, S, rtol=1e-9, atol=1e-12)


# ---- chunk pieces -------------------------------------------------------------


def test_chunk_decay_hand():
    g, Gamma = chunk_decay(np.log([0.5, 0.5, 0.25]))
    np.testing.assert_allclose(g, np.log([0.5, 0.25, 0.0625]))
    np.testing.assert_allclose(Gamma, [[1.0, 0.0, 0.0], [0.5, 1.0, 0.0], [0.125, 0.25, 1.0]])


def test_chunk_decay_no_overflow():
    with np.errstate(over="raise", invalid="raise"):
        _, Gamma = chunk_decay(np.full(4, -400.0))
    np.testing.assert_allclose(np.triu(Gamma, 1), 0.0)
    np.testing.assert_allclose(np.diag(Gamma), 1.0)


def test_strictly_lower_A_hand():
    A = strictly_lower_A(HK, HBETA, np.array([[1.0, 0.0], [0.5, 1.0]]))
    # A_21 = β_2 Γ_21 k_2·k_1 = 1 * 0.5 * 0.6
    np.testing.assert_allclose(A, [[0.0, 0.0], [0.3, 0.0]])


def test_strictly_lower_A_three():
    rng = np.random.default_rng(12)
    K = rng.normal(size=(3, 2))
    beta = np.array([0.2, 0.5, 0.8])
    Gamma = np.array([[1.0, 0.0, 0.0], [0.5, 1.0, 0.0], [0.1, 0.2, 1.0]])
    A = strictly_lower_A(K, beta, Gamma)
    expected = np.zeros((3, 3))
    expected[1, 0] = 0.5 * 0.5 * (K[1] @ K[0])
    expected[2, 0] = 0.8 * 0.1 * (K[2] @ K[0])
    expected[2, 1] = 0.8 * 0.2 * (K[2] @ K[1])
    np.testing.assert_allclose(A, expected, atol=1e-15)


def test_ut_transform_hand():
    Tm = ut_transform(np.array([[0.0, 0.0], [0.3, 0.0]]), HBETA)
    # (I + A)^{-1} diag(β) = [[1, 0], [-0.3, 1]] diag(0.5, 1)
    np.testing.assert_allclose(Tm, [[0.5, 0.0], [-0.15, 1.0]])


def test_ut_transform_hand_three():
    # A = 0.5 strictly below the diagonal, β = 1
    A = np.tril(np.full((3, 3), 0.5), k=-1)
    Tm = ut_transform(A, np.ones(3))
    np.testing.assert_allclose(Tm, [[1.0, 0.0, 0.0], [-0.5, 1.0, 0.0], [-0.25, -0.5, 1.0]], atol=1e-12)


def test_ut_transform_inverts():
    rng = np.random.default_rng(8)
    A = np.tril(rng.normal(size=(6, 6)) * 0.5, k=-1)
    beta = rng.uniform(0.1, 1.0, size=6)
    Tm = ut_transform(A, beta)
    np.testing.assert_allclose((np.eye(6) + A) @ Tm, np.diag(beta), atol=1e-12)
    assert np.allclose(np.triu(Tm, 1), 0.0)


def test_chunk_step_hand_from_zero():
    O, S = chunk_step(HQ, HK, HV, HLOGA, HBETA, np.zeros((1, 2)))
    np.testing.assert_allclose(O[:, 0], [1.0, 0.92])
    np.testing.assert_allclose(S, [[0.92, 0.56]])


def test_chunk_step_hand_entering_state():
    O, S = chunk_step(HQ[1:], HK[1:], HV[1:], HLOGA[1:], HBETA[1:], np.array([[1.0, 0.0]]))
    np.testing.assert_allclose(O[:, 0], [0.92])
    np.testing.assert_allclose(S, [[0.92, 0.56]])


def test_chunk_step_hand_decay_only_at_start():
    # state [2, 0] enters; first token decays by 1/2 and writes nothing (β = 0); the second
    # writes v = 3 along k = e2 with β = 1/2 and no decay: S = [1, 1.5]
    Q = np.array([[1.0, 0.0], [1.0, 1.0]])
    K = np.array([[1.0, 0.0], [0.0, 1.0]])
    V = np.array([[5.0], [3.0]])
    O, S = chunk_step(Q, K, V, np.log([0.5, 1.0]), np.array([0.0, 0.5]), np.array([[2.0, 0.0]]))
    np.testing.assert_allclose(O[:, 0], [1.0, 2.5])
    np.testing.assert_allclose(S, [[1.0, 1.5]])


# ---- chunkwise form -------------------------------------------------------------


@pytest.mark.parametrize("chunk", [1, 2, 3, 4, 7, 10])
def test_chunkwise_matches_error_correction_rule(chunk):
    Q, K, V, log_alpha, beta, S0 = random_problem(seed=9)
    O_ref, S_ref = error_correction_rule(Q, K, V, log_alpha, beta, S0)
    O, S = gated_delta_chunkwise(Q, K, V, log_alpha, beta, chunk, S0)
    np.testing.assert_allclose(O, O_ref, rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(S, S_ref, rtol=1e-9, atol=1e-12)
    O_ref, S_ref = error_correction_rule(Q, K, V, log_alpha, beta)
    O, S = gated_delta_chunkwise(Q, K, V, log_alpha, beta, chunk)
    np.testing.assert_allclose(O, O_ref, rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(S, S_ref, rtol=1e-9, atol=1e-12)


def test_chunkwise_hand():
    O, S = gated_delta_chunkwise(HQ, HK, HV, HLOGA, HBETA, 2)
    np.testing.assert_allclose(O[:, 0], [1.0, 0.92])
    np.testing.assert_allclose(S, [[0.92, 0.56]])
    O, S = gated_delta_chunkwise(HQ, HK, HV, HLOGA, HBETA, 1)
    np.testing.assert_allclose(O[:, 0], [1.0, 0.92])


def test_recurrent_and_chunkwise_agree():
    Q, K, V, log_alpha, beta, S0 = random_problem(T=12, d_k=5, d_v=2, seed=10)
    O1, S1 = gated_delta_recurrent(Q, K, V, log_alpha, beta, S0)
    O2, S2 = gated_delta_chunkwise(Q, K, V, log_alpha, beta, 5, S0)
    np.testing.assert_allclose(O2, O1, rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(S2, S1, rtol=1e-9, atol=1e-12)


# ---- short convolution and output norm ---------------------------------------------


def test_short_conv_hand():
    x = np.array([[1.0, 10.0], [2.0, 20.0], [3.0, 30.0]])
    w = np.array([[0.5, 1.0], [0.25, -1.0]])
    # y_t = w[0] x_t + w[1] x_{t-1}
    np.testing.assert_allclose(short_conv(x, w), [[0.5, 10.0], [1.25, 10.0], [2.0, 10.0]])


def test_short_conv_long_kernel_and_impulse():
    x = np.zeros((3, 1))
    x[0, 0] = 1.0
    w = np.array([[4.0], [3.0], [2.0], [1.0]])
    # an impulse at t = 0 reads out the kernel; taps beyond the sequence are unused
    np.testing.assert_allclose(short_conv(x, w)[:, 0], [4.0, 3.0, 2.0])
    x = np.array([[1.0], [1.0], [1.0]])
    np.testing.assert_allclose(short_conv(x, w)[:, 0], [4.0, 7.0, 9.0])


def test_gated_rmsnorm_hand():
    o = np.array([[3.0, 4.0], [0.0, 0.0]])
    gate = np.array([[0.0, 30.0], [1.0, 1.0]])
    weight = np.array([2.0, 0.5])
    out = gated_rmsnorm(o, gate, weight)
    rms = np.sqrt(12.5 + 1e-6)
    silu30 = 30.0 / (1.0 + np.exp(-30.0))
    np.testing.assert_allclose(out, [[0.0, 4.0 / rms * 0.5 * silu30], [0.0, 0.0]], rtol=1e-12)


def test_gated_rmsnorm_scale_invariant():
    rng = np.random.default_rng(13)
    o, gate, weight = 10.0 * rng.normal(size=(4, 6)), rng.normal(size=(4, 6)), rng.normal(size=6)
    a = gated_rmsnorm(o, gate, weight)
    np.testing.assert_allclose(gated_rmsnorm(50.0 * o, gate, weight), a, rtol=1e-8)
    rms_of_normed = np.sqrt(np.mean((a / (weight * gate / (1.0 + np.exp(-gate)))) ** 2, axis=1))
    np.testing.assert_allclose(rms_of_normed, 1.0, rtol=1e-6)
    # rows are normalised along the last axis, also with leading batch axes
    batched = gated_rmsnorm(np.stack([o, 2.0 * o]), np.stack([gate, gate]), weight)
    np.testing.assert_allclose(batched[0], a, rtol=1e-12)
    np.testing.assert_allclose(batched[1], a, rtol=1e-8)


# ---- the head -------------------------------------------------------------------


def _silu(u):
    return u / (1.0 + np.exp(-u))


def test_head_single_token():
    # one token from a zero state: S = β v kᵀ, o = β v (k·q); kernels of length 1 scale by 1
    x = np.array([[1.0]])
    Wq, Wk, Wv = np.array([[3.0, 4.0]]), np.array([[4.0, 3.0]]), np.array([[2.0, -1.0]])
    one = np.ones((1, 2))
    q = np.array([_silu(3.0), _silu(4.0)])
    k = q[::-1]
    cos = (q @ k) / (q @ q + 1e-6)
    v = np.array([_silu(2.0), _silu(-1.0)])
    beta = 1.0 / (1.0 + np.exp(-0.5))
    Wg, norm_weight = np.array([[1.0, -2.0]]), np.array([1.5, 0.5])
    O, S = gated_deltanet_head(
        x, Wq, Wk, Wv, one, one, one, np.array([0.3]), np.array([0.5]), 0.0, 0.0, Wg, norm_weight, 4
    )
    raw = beta * cos * v
    expected = raw / np.sqrt(np.mean(raw**2) + 1e-6) * norm_weight * _silu(np.array([1.0, -2.0]))
    np.testing.assert_allclose(O[0], expected, rtol=1e-9)
    np.testing.assert_allclose(S, beta * np.outer(v, k) / np.sqrt(q @ q + 1e-6), rtol=1e-9)


def test_head_matches_rule():
    rng = np.random.default_rng(11)
    T = 6
    x = rng.normal(size=(T, 3))
    Wq, Wk, Wv = rng.normal(size=(3, 4)), rng.normal(size=(3, 4)), rng.normal(size=(3, 2))
    cq, ck, cv = rng.normal(size=(3, 4)), rng.normal(size=(2, 4)), rng.normal(size=(4, 2))
    wa, wb = rng.normal(size=3), rng.normal(size=3)
    Wg, norm_weight = rng.normal(size=(3, 2)), rng.normal(size=2)

    def conv(u, w):
        return np.array([sum(w[i] * u[t - i] for i in range(len(w)) if t - i >= 0) for t in range(T)])

    def unit(u):
        return u / np.sqrt(np.sum(u * u, axis=1, keepdims=True) + 1e-6)

    log_alpha = -np.exp(0.2) * np.log1p(np.exp(x @ wa - 0.1))
    beta = 1.0 / (1.0 + np.exp(-(x @ wb)))
    Q = unit(_silu(conv(x @ Wq, cq)))
    K = unit(_silu(conv(x @ Wk, ck)))
    V = _silu(conv(x @ Wv, cv))
    O_ref, S_ref = error_correction_rule(Q, K, V, log_alpha, beta)
    O_ref = O_ref / np.sqrt(np.mean(O_ref**2, axis=1, keepdims=True) + 1e-6) * norm_weight * _silu(x @ Wg)
    O, S = gated_deltanet_head(x, Wq, Wk, Wv, cq, ck, cv, wa, wb, 0.2, -0.1, Wg, norm_weight, 4)
    np.testing.assert_allclose(O, O_ref, rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(S, S_ref, rtol=1e-9, atol=1e-12)
