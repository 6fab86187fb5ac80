"""Tests for the SSD forms, against hand-worked cases, closed forms and each other."""

import numpy as np
import pytest
from ssd import discretize, segsum, ssd_chunked, ssd_head, ssd_quadratic, ssm_matrix, ssm_recurrent

LOG_HALF = np.log(0.5)


def random_problem(T=6, N=3, P=2, seed=0):
    rng = np.random.default_rng(seed)
    x = rng.normal(size=(T, P))
    log_a = -rng.uniform(0.05, 1.5, size=T)
    B = rng.normal(size=(T, N))
    C = rng.normal(size=(T, N))
    h0 = rng.normal(size=(N, P))
    return x, log_a, B, C, h0


def naive_outputs(x, log_a, B, C, h0=None):
    """y_t = sum_{s<=t} (prod_{k=s+1}^t a_k) (C_t . B_s) x_s + (prod_{k<=t} a_k) C_t^T h0, by explicit products."""
    T, P = x.shape
    a = np.exp(log_a)
    y = np.zeros((T, P))
    for t in range(T):
        for s in range(t + 1):
            y[t] += np.prod(a[s + 1 : t + 1]) * (C[t] @ B[s]) * x[s]
        if h0 is not None:
            y[t] += np.prod(a[: t + 1]) * (C[t] @ h0)
    return y


def naive_final_state(x, log_a, B, h0=None):
    T, P = x.shape
    a = np.exp(log_a)
    h = np.zeros((B.shape[1], P)) if h0 is None else np.prod(a) * h0
    for s in range(T):
        h = h + np.prod(a[s + 1 :]) * np.outer(B[s], x[s])
    return h


# ---- discretisation -------------------------------------------------------


def test_discretize_hand():
    x = np.array([[1.0, -2.0], [3.0, 0.5]])
    dt_raw = np.array([0.0, np.log(np.e - 1.0) - 0.5])
    log_a, x_bar, dt = discretize(x, dt_raw, 0.5, np.log(2.0))
    # softplus(0.5) and softplus(log(e - 1)) = 1; A = -2
    d0 = np.log1p(np.exp(0.5))
    np.testing.assert_allclose(dt, [d0, 1.0])
    np.testing.assert_allclose(log_a, [-2.0 * d0, -2.0])
    np.testing.assert_allclose(x_bar, [[d0, -2.0 * d0], [3.0, 0.5]])


def test_discretize_decay_in_unit_interval():
    rng = np.random.default_rng(1)
    log_a, _, dt = discretize(rng.normal(size=(50, 2)), rng.normal(size=50) * 5, -1.0, 0.3)
    assert np.all(dt > 0)
    a = np.exp(log_a)
    assert np.all((a > 0) & (a < 1))
    np.testing.assert_allclose(log_a, -np.exp(0.3) * dt)


# ---- segsum ---------------------------------------------------------------


def test_segsum_hand():
    out = segsum(np.array([1.0, 2.0, 3.0]))
    expected = np.array([[0.0, -np.inf, -np.inf], [2.0, 0.0, -np.inf], [5.0, 3.0, 0.0]])
    np.testing.assert_array_equal(out, expected)


def test_segsum_last_axis_batched():
    v = np.array([[1.0, 2.0, 3.0], [-1.0, 0.5, 4.0]])
    out = segsum(v)
    assert out.shape == (2, 3, 3)
    np.testing.assert_allclose(out[1][np.tril_indices(3)], [0.0, 0.5, 0.0, 4.5, 4.0, 0.0])
    assert np.all(np.isneginf(out[:, 0, 1:])) and np.isneginf(out[1, 1, 2])


# ---- recurrence -----------------------------------------------------------


def test_recurrent_hand_scalar():
    x = np.array([[1.0], [2.0], [3.0], [4.0]])
    log_a = np.full(4, LOG_HALF)
    ones = np.ones((4, 1))
    y, h = ssm_recurrent(x, log_a, ones, ones)
    np.testing.assert_allclose(y[:, 0], [1.0, 2.5, 4.25, 6.125])
    np.testing.assert_allclose(h, [[6.125]])


def test_recurrent_hand_two_state_dims():
    # N = 2, P = 1; h0 = [[1], [-1]]
    x = np.array([[2.0], [1.0]])
    log_a = np.log([0.5, 0.25])
    B = np.array([[1.0, 0.0], [0.0, 2.0]])
    C = np.array([[1.0, 1.0], [3.0, 1.0]])
    y, h = ssm_recurrent(x, log_a, B, C, h0=np.array([[1.0], [-1.0]]))
    # h1 = 0.5*[1,-1] + [2,0] = [2.5,-0.5]; y1 = 2.0
    # h2 = 0.25*[2.5,-0.5] + [0,2] = [0.625, 1.875]; y2 = 1.875 + 1.875 = 3.75
    np.testing.assert_allclose(y[:, 0], [2.0, 3.75])
    np.testing.assert_allclose(h[:, 0], [0.625, 1.875])


def test_recurrent_matches_naive():
    x, log_a, B, C, h0 = random_problem()
    y, h = ssm_recurrent(x, log_a, B, C, h0)
    np.testing.assert_allclose(y, naive_outputs(x, log_a, B, C, h0), rtol=1e-10)
    np.testing.assert_allclose(h, naive_final_state(x, log_a, B, h0), rtol=1e-10)


# ---- the semiseparable matrix and the quadratic form ----------------------


def test_matrix_hand():
    B = np.array([[1.0, 2.0], [0.0, 1.0], [1.0, 1.0]])
    C = np.array([[1.0, 0.0], [2.0, 1.0], [1.0, -1.0]])
    log_a = np.log([0.9, 0.5, 0.25])
    M = ssm_matrix(log_a, B, C)
    expected = np.array(
        [
            [1.0, 0.0, 0.0],
            [0.5 * 4.0, 1.0, 0.0],
            [0.125 * -1.0, 0.25 * -1.0, 0.0],
        ]
    )
    np.testing.assert_allclose(M, expected)


def test_matrix_is_semiseparable():
    # every block on or below the diagonal has rank at most N
    x, log_a, B, C, _ = random_problem(T=8, N=2, seed=3)
    M = ssm_matrix(log_a, B, C)
    assert np.allclose(np.triu(M, 1), 0.0)
    for j in range(8):
        block = M[j:, : j + 1]
        assert np.linalg.matrix_rank(block, tol=1e-9) <= 2


def test_quadratic_hand_scalar():
    x = np.array([[1.0], [2.0], [3.0], [4.0]])
    ones = np.ones((4, 1))
    y = ssd_quadratic(x, np.full(4, LOG_HALF), ones, ones)
    np.testing.assert_allclose(y[:, 0], [1.0, 2.5, 4.25, 6.125])


def test_quadratic_matches_naive():
    x, log_a, B, C, h0 = random_problem(seed=4)
    np.testing.assert_allclose(ssd_quadratic(x, log_a, B, C), naive_outputs(x, log_a, B, C), rtol=1e-10)


def test_quadratic_initial_state_hand():
    # x = 0: only h0 contributes, y_t = (a_1 ... a_t) C_t^T h0
    x = np.zeros((3, 1))
    B = np.ones((3, 2))
    C = np.array([[1.0, 0.0], [0.0, 1.0], [1.0, 1.0]])
    h0 = np.array([[2.0], [4.0]])
    y = ssd_quadratic(x, np.log([0.5, 0.5, 0.25]), B, C, h0)
    np.testing.assert_allclose(y[:, 0], [1.0, 1.0, 0.375])


def test_quadratic_with_initial_state_matches_recurrent():
    x, log_a, B, C, h0 = random_problem(seed=5)
    y_rec, _ = ssm_recurrent(x, log_a, B, C, h0)
    np.testing.assert_allclose(ssd_quadratic(x, log_a, B, C, h0), y_rec, rtol=1e-10)
    np.testing.assert_allclose(y_rec, naive_outputs(x, log_a, B, C, h0), rtol=1e-10)


# ---- the chunked SSD algorithm ---------------------------------------------


@pytest.mark.parametrize("Q", [1, 2, 4])
def test_chunked_hand_scalar(Q):
    x = np.array([[1.0], [2.0], [3.0], [4.0]])
    ones = np.ones((4, 1))
    y, h = ssd_chunked(x, np.full(4, LOG_HALF), ones, ones, Q)
    np.testing.assert_allclose(y[:, 0], [1.0, 2.5, 4.25, 6.125])
    np.testing.assert_allclose(h, [[6.125]])


def test_chunked_hand_impulse_crosses_chunks():
    # an input at t = 1 must reach every later chunk through the chunk states
    x = np.array([[0.0], [8.0], [0.0], [0.0], [0.0], [0.0]])
    B = np.full((6, 1), 0.5)
    C = np.full((6, 1), 2.0)
    y, h = ssd_chunked(x, np.full(6, LOG_HALF), B, C, 2)
    np.testing.assert_allclose(y[:, 0], [0.0, 8.0, 4.0, 2.0, 1.0, 0.5])
    np.testing.assert_allclose(h, [[0.25]])


def test_chunked_hand_initial_state():
    x = np.zeros((4, 1))
    ones = np.ones((4, 1))
    y, h = ssd_chunked(x, np.log([0.5, 0.5, 0.5, 0.25]), ones, ones, 2, h0=np.array([[16.0]]))
    np.testing.assert_allclose(y[:, 0], [8.0, 4.0, 2.0, 0.5])
    np.testing.assert_allclose(h, [[0.5]])


@pytest.mark.parametrize("Q", [1, 2, 3, 6])
def test_chunked_matches_naive(Q):
    x, log_a, B, C, h0 = random_problem(seed=7)
    y, h = ssd_chunked(x, log_a, B, C, Q)
    np.testing.assert_allclose(y, naive_outputs(x, log_a, B, C), rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(h, naive_final_state(x, log_a, B), rtol=1e-9, atol=1e-12)
    y, h = ssd_chunked(x, log_a, B, C, Q, h0)
    np.testing.assert_allclose(y, naive_outputs(x, log_a, B, C, h0), rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(h, naive_final_state(x, log_a, B, h0), rtol=1e-9, atol=1e-12)


def test_three_forms_agree():
    x, log_a, B, C, h0 = random_problem(T=12, N=4, P=3, seed=8)
    y_rec, h_rec = ssm_recurrent(x, log_a, B, C, h0)
    y_quad = ssd_quadratic(x, log_a, B, C, h0)
    y_chunk, h_chunk = ssd_chunked(x, log_a, B, C, 4, h0)
    np.testing.assert_allclose(y_quad, y_rec, rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(y_chunk, y_rec, rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(h_chunk, h_rec, rtol=1e-9, atol=1e-12)


def test_chunked_states_split_sequence():
    # running two halves with the state carried over equals one run
    x, log_a, B, C, h0 = random_problem(T=8, seed=9)
    y, h = ssd_chunked(x, log_a, B, C, 2, h0)
    y1, h1 = ssd_chunked(x[:4], log_a[:4], B[:4], C[:4], 2, h0)
    y2, h2 = ssd_chunked(x[4:], log_a[4:], B[4:], C[4:], 4, h1)
    np.testing.assert_allclose(np.concatenate([y1, y2]), y, rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(h2, h, rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(h, naive_final_state(x, log_a, B, h0), rtol=1e-9)


# ---- the head ---------------------------------------------------------------


def test_head_skip_only():
    # B = 0: the SSM contributes nothing, y = D x * silu(z)
    x = np.array([[1.0, 2.0], [-1.0, 0.5]])
    z = np.array([[0.0, 1.0], [2.0, -1.0]])
    y, h = ssd_head(x, z, np.zeros(2), 0.0, 0.0, np.zeros((2, 1)), np.ones((2, 1)), 3.0, 2)
    silu = z / (1.0 + np.exp(-z))
    np.testing.assert_allclose(y, 3.0 * x * silu)
    np.testing.assert_allclose(h, np.zeros((1, 2)))


def test_head_hand():
    # dt = softplus(log(e-1)) = 1, A = -exp(log log 2) = -log 2, so a = 1/2, x_bar = x
    T = 3
    x = np.array([[2.0], [0.0], [4.0]])
    z = np.full((T, 1), 30.0)  # silu(30) = 30 * sigmoid(30)
    ones = np.ones((T, 1))
    y, h = ssd_head(x, z, np.zeros(T), np.log(np.e - 1.0), np.log(np.log(2.0)), ones, ones, 0.5, 1)
    gate = 30.0 / (1.0 + np.exp(-30.0))
    np.testing.assert_allclose(y[:, 0], (np.array([2.0, 1.0, 4.5]) + 0.5 * x[:, 0]) * gate)
    np.testing.assert_allclose(h, [[4.5]])
