"""Tests for PiSSA, checked against matrices with a known SVD, invariants and small hand cases."""

import numpy as np
import pytest
from pissa import PiSSALinear, pissa_init, quantization_error_reduction, randomized_svd


def orthonormal(rows, cols, rng):
    q, _ = np.linalg.qr(rng.standard_normal((rows, cols)))
    return q


def known_svd(m, n, s, seed=0):
    """W = U diag(s) Vᵀ with random orthonormal U, V and the given singular values."""
    rng = np.random.default_rng(seed)
    k = len(s)
    U, V = orthonormal(m, k, rng), orthonormal(n, k, rng)
    return U @ np.diag(s) @ V.T, U, np.asarray(s, dtype=float), V


GAP = [10.0, 9.0, 8.0, 7.0, 2.0, 1.5, 1.0, 0.5, 0.2]


# ---------------------------------------------------------------- fast SVD


def test_fast_svd_recovers_a_low_rank_matrix_exactly():
    W, U, s, V = known_svd(12, 9, [5.0, 3.0, 0.5])
    Ur, Sr, Vhr = randomized_svd(W, 3, niter=0, rng=np.random.default_rng(1))
    assert Ur.shape == (12, 3) and Sr.shape == (3,) and Vhr.shape == (3, 9)
    np.testing.assert_allclose(Sr, s, rtol=1e-10)
    np.testing.assert_allclose(Ur @ np.diag(Sr) @ Vhr, W, atol=1e-10)


def test_fast_svd_with_subspace_iterations_matches_top_singular_triplets():
    W, U, s, V = known_svd(14, 10, GAP, seed=2)
    Ur, Sr, Vhr = randomized_svd(W, 4, niter=8, rng=np.random.default_rng(3))
    np.testing.assert_allclose(Sr, s[:4], rtol=1e-8)
    np.testing.assert_allclose(Ur.T @ Ur, np.eye(4), atol=1e-10)
    np.testing.assert_allclose(Vhr @ Vhr.T, np.eye(4), atol=1e-10)
    # each singular vector equals the true one up to sign
    np.testing.assert_allclose(np.abs(np.sum(Ur * U[:, :4], axis=0)), 1.0, atol=1e-6)
    np.testing.assert_allclose(np.abs(np.sum(Vhr.T * V[:, :4], axis=0)), 1.0, atol=1e-6)


def test_fast_svd_improves_with_iterations():
    W, _, s, _ = known_svd(14, 10, GAP, seed=4)
    errors = []
    for niter in (0, 1, 8):
        _, Sr, _ = randomized_svd(W, 4, niter=niter, rng=np.random.default_rng(5))
        assert np.all(np.diff(Sr) <= 0)
        errors.append(np.abs(Sr - s[:4]).max())
    assert errors[0] > 1e-3
    assert errors[2] < 1e-6
    assert errors[0] > errors[1] > errors[2]


# ---------------------------------------------------------------- initialisation


def test_hand_diagonal_weight():
    W = np.array([[3.0, 0.0], [0.0, 1.0], [0.0, 0.0]])
    A, B, W_res = pissa_init(W, 1)
    assert A.shape == (3, 1) and B.shape == (1, 2)
    np.testing.assert_allclose(np.abs(A[:, 0]), [np.sqrt(3.0), 0.0, 0.0], atol=1e-12)
    np.testing.assert_allclose(np.abs(B[0]), [np.sqrt(3.0), 0.0], atol=1e-12)
    np.testing.assert_allclose(A @ B, [[3.0, 0.0], [0.0, 0.0], [0.0, 0.0]], atol=1e-12)
    np.testing.assert_allclose(W_res, [[0.0, 0.0], [0.0, 1.0], [0.0, 0.0]], atol=1e-12)


def test_adapter_factors_share_the_singular_values():
    W, _, s, _ = known_svd(8, 6, [6.0, 4.0, 3.0, 1.0, 0.5, 0.1], seed=6)
    A, B, _ = pissa_init(W, 3)
    assert A.shape == (8, 3) and B.shape == (3, 6)
    np.testing.assert_allclose(A.T @ A, np.diag(s[:3]), atol=1e-10)
    np.testing.assert_allclose(B @ B.T, np.diag(s[:3]), atol=1e-10)


def test_adapter_is_the_best_rank_r_approximation():
    W, U, s, V = known_svd(9, 7, [6.0, 4.0, 3.0, 1.0, 0.5, 0.1], seed=7)
    A, B, _ = pissa_init(W, 2)
    np.testing.assert_allclose(A @ B, U[:, :2] @ np.diag(s[:2]) @ V[:, :2].T, atol=1e-10)


def test_residual_holds_the_minor_components():
    W, U, s, V = known_svd(9, 7, [6.0, 4.0, 3.0, 1.0, 0.5, 0.1], seed=8)
    A, B, W_res = pissa_init(W, 2)
    np.testing.assert_allclose(W_res + A @ B, W, atol=1e-12)
    np.testing.assert_allclose(W_res, U[:, 2:] @ np.diag(s[2:]) @ V[:, 2:].T, atol=1e-10)
    np.testing.assert_allclose(np.linalg.svd(W_res, compute_uv=False)[:4], s[2:], atol=1e-10)
    np.testing.assert_allclose(A.T @ W_res, 0.0, atol=1e-10)
    np.testing.assert_allclose(W_res @ B.T, 0.0, atol=1e-10)


def test_fast_initialization_keeps_the_weight_exact():
    W, U, s, V = known_svd(14, 10, GAP, seed=9)
    A, B, W_res = pissa_init(W, 4, niter=12, rng=np.random.default_rng(10))
    np.testing.assert_allclose(W_res + A @ B, W, atol=1e-12)
    np.testing.assert_allclose(A @ B, U[:, :4] @ np.diag(s[:4]) @ V[:, :4].T, atol=1e-6)
    np.testing.assert_allclose(A.T @ A, np.diag(s[:4]), atol=1e-6)


def test_fast_initialization_uses_the_randomized_svd():
    # without iterations the rank-4 part of a matrix with a slow spectrum is only approximate
    W, U, s, V = known_svd(14, 10, GAP, seed=11)
    A, B, W_res = pissa_init(W, 4, niter=0, rng=np.random.default_rng(12))
    np.testing.assert_allclose(W_res + A @ B, W, atol=1e-12)
    assert np.abs(A @ B - U[:, :4] @ np.diag(s[:4]) @ V[:, :4].T).max() > 1e-3


# ---------------------------------------------------------------- the layer


def hand_layer():
    layer = PiSSALinear(np.eye(2, 3), 1)
    layer.W_res = np.array([[1.0, 0.0, 2.0], [0.0, 1.0, 0.0]])
    layer.A = np.array([[1.0, 0.0], [2.0, 1.0]])
    layer.B = np.array([[3.0, 4.0, 0.0], [0.0, 1.0, 5.0]])
    return layer


def test_forward_hand():
    layer = hand_layer()
    X = np.array([[1.0, 1.0], [2.0, 0.0]])
    # X W_res = [[1, 1, 2], [2, 0, 4]]; X A = [[3, 1], [2, 0]]; (X A) B = [[9, 13, 5], [6, 8, 0]]
    np.testing.assert_allclose(layer.forward(X), [[10.0, 14.0, 7.0], [8.0, 8.0, 4.0]])


def test_forward_at_initialization_is_the_base_layer():
    W, _, _, _ = known_svd(6, 5, [4.0, 3.0, 2.0, 1.0, 0.5], seed=13)
    layer = PiSSALinear(W, 2)
    X = np.random.default_rng(14).standard_normal((3, 6))
    np.testing.assert_allclose(layer.forward(X), X @ W, atol=1e-12)
    np.testing.assert_allclose(layer.merged_weight(), W, atol=1e-12)


def test_merged_weight_hand():
    layer = hand_layer()
    np.testing.assert_allclose(layer.merged_weight(), [[4.0, 4.0, 2.0], [6.0, 10.0, 5.0]])


def test_gradients_match_finite_differences():
    rng = np.random.default_rng(15)
    layer = PiSSALinear(rng.standard_normal((5, 4)), 2)
    X = rng.standard_normal((3, 5))
    C = rng.standard_normal((3, 4))  # L = Σ C ∘ Y, so ∂L/∂Y = C
    grad_A, grad_B = layer.gradients(X, C)
    h = 1e-6
    for name, grad in (("A", grad_A), ("B", grad_B)):
        param = getattr(layer, name)
        assert grad.shape == param.shape
        for idx in np.ndindex(param.shape):
            old = param[idx]
            param[idx] = old + h
            up = np.sum(C * layer.forward(X))
            param[idx] = old - h
            down = np.sum(C * layer.forward(X))
            param[idx] = old
            assert grad[idx] == pytest.approx((up - down) / (2 * h), abs=1e-7)


def test_zero_b_gives_a_zero_gradient_for_a():
    rng = np.random.default_rng(16)
    layer = PiSSALinear(rng.standard_normal((5, 4)), 2)
    layer.B = np.zeros((2, 4))
    X = rng.standard_normal((3, 5))
    G = rng.standard_normal((3, 4))
    grad_A, grad_B = layer.gradients(X, G)
    np.testing.assert_array_equal(grad_A, 0.0)
    assert np.abs(grad_B).max() > 0.1


def test_sgd_step_trains_only_the_adapter():
    layer = hand_layer()
    W_res = layer.W_res.copy()
    X = np.array([[1.0, 0.0]])
    G = np.array([[1.0, 0.0, 0.0]])
    # ∂L/∂A = Xᵀ G Bᵀ = [[3, 0], [0, 0]]; ∂L/∂B = (X A)ᵀ G = [[1, 0, 0], [0, 0, 0]]
    layer.sgd_step(X, G, 0.5)
    np.testing.assert_array_equal(layer.W_res, W_res)
    np.testing.assert_allclose(layer.A, [[-0.5, 0.0], [2.0, 1.0]])
    np.testing.assert_allclose(layer.B, [[2.5, 4.0, 0.0], [0.0, 1.0, 5.0]])


def test_sgd_fits_a_target_through_the_adapter():
    rng = np.random.default_rng(17)
    W, U, s, V = known_svd(6, 5, [4.0, 3.0, 2.0, 1.0, 0.5], seed=18)
    target = W + 0.5 * U[:, :2] @ np.diag([1.0, -1.0]) @ V[:, :2].T  # change inside the principal subspace
    layer = PiSSALinear(W, 2)
    X = rng.standard_normal((40, 6))
    Y = X @ target

    def loss():
        return 0.5 * np.mean(np.sum((layer.forward(X) - Y) ** 2, axis=1))

    start = loss()
    for _ in range(300):
        layer.sgd_step(X, (layer.forward(X) - Y) / len(X), 0.02)
    assert loss() < 1e-3 * start
    np.testing.assert_allclose(layer.merged_weight(), target, atol=1e-2)


# ---------------------------------------------------------------- conversion and quantisation


def test_conversion_to_lora():
    rng = np.random.default_rng(19)
    W = rng.standard_normal((6, 5))
    layer = PiSSALinear(W, 2)
    A_lora, B_lora = layer.to_lora()
    assert A_lora.shape == (6, 4) and B_lora.shape == (4, 5)
    np.testing.assert_allclose(A_lora @ B_lora, 0.0, atol=1e-12)
    X = rng.standard_normal((8, 6))
    for _ in range(5):
        layer.sgd_step(X, rng.standard_normal((8, 5)), 0.05)
    A_lora, B_lora = layer.to_lora()
    np.testing.assert_allclose(W + A_lora @ B_lora, layer.merged_weight(), atol=1e-12)
    assert np.linalg.matrix_rank(A_lora @ B_lora) <= 4


def test_conversion_to_lora_hand():
    layer = hand_layer()
    layer.A0 = np.array([[1.0, 0.0], [0.0, 1.0]])
    layer.B0 = np.array([[1.0, 0.0, 0.0], [0.0, 0.0, 1.0]])
    A_lora, B_lora = layer.to_lora()
    np.testing.assert_allclose(A_lora, [[1.0, 0.0, 1.0, 0.0], [2.0, 1.0, 0.0, 1.0]])
    np.testing.assert_allclose(B_lora, [[3.0, 4.0, 0.0], [0.0, 1.0, 5.0], [-1.0, 0.0, 0.0], [0.0, 0.0, -1.0]])


def test_quantization_error_reduction_closed_form():
    W, _, s, _ = known_svd(8, 6, [6.0, 4.0, 3.0, 1.0, 0.5, 0.1], seed=20)
    expected = 100.0 * s[:2].sum() / s.sum()
    # a quantiser that loses everything: errors ‖W‖_* and ‖W − A B‖_*
    assert quantization_error_reduction(W, 2, lambda M: np.zeros_like(M)) == pytest.approx(expected)
    # halving: errors ‖W‖_*/2 and ‖W_res‖_*/2
    assert quantization_error_reduction(W, 2, lambda M: M / 2) == pytest.approx(expected)


def test_quantization_error_reduction_is_positive_for_a_dominant_spectrum():
    rng = np.random.default_rng(21)
    W = 5.0 * np.outer(rng.standard_normal(64), rng.standard_normal(64)) + rng.standard_normal((64, 64)) * 0.1
    ratio = quantization_error_reduction(W, 4)
    assert 0.0 < ratio < 100.0
