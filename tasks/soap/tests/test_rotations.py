"""Rotations into and out of the eigenbasis, and the eigenbasis computations."""

import numpy as np
import pytest
from soap import eigenbasis, project, project_back, refresh_eigenbasis

X = np.array([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]])
SWAP = np.array([[0.0, 1.0], [1.0, 0.0]])
CYCLE = np.array([[0.0, 0.0, 1.0], [1.0, 0.0, 0.0], [0.0, 1.0, 0.0]])


def orth(n, seed):
    q, _ = np.linalg.qr(np.random.default_rng(seed).normal(size=(n, n)))
    return q


def same_up_to_column_signs(A, B, atol=1e-10):
    signs = np.sign(np.sum(A * B, axis=0))
    np.testing.assert_allclose(A * signs, B, atol=atol)


# ------------------------------------------------------------------ project


def test_project_hand_example():
    # Q_L^T X swaps the rows; (.) Q_R moves column 1 to 0, 2 to 1 and 0 to 2
    np.testing.assert_allclose(project(X, SWAP, CYCLE), [[5.0, 6.0, 4.0], [2.0, 3.0, 1.0]])


def test_project_one_sided_and_identity():
    np.testing.assert_allclose(project(X, SWAP, None), [[4.0, 5.0, 6.0], [1.0, 2.0, 3.0]])
    np.testing.assert_allclose(project(X, None, CYCLE), [[2.0, 3.0, 1.0], [5.0, 6.0, 4.0]])
    np.testing.assert_allclose(project(X, None, None), X)


def test_project_uses_transpose_on_the_left():
    QL = np.array([[0.6, -0.8], [0.8, 0.6]])
    x = np.array([[1.0], [0.0]])
    np.testing.assert_allclose(project(x, QL, None), [[0.6], [-0.8]])
    np.testing.assert_allclose(project(x.T, None, QL), [[0.6, -0.8]])


def test_project_back_hand_example():
    np.testing.assert_allclose(project_back(np.array([[5.0, 6.0, 4.0], [2.0, 3.0, 1.0]]), SWAP, CYCLE), X)
    np.testing.assert_allclose(project_back(X, None, CYCLE), [[3.0, 1.0, 2.0], [6.0, 4.0, 5.0]])
    np.testing.assert_allclose(project_back(X, SWAP, None), [[4.0, 5.0, 6.0], [1.0, 2.0, 3.0]])


def test_project_back_uses_transpose_on_the_right():
    QR = np.array([[0.6, -0.8], [0.8, 0.6]])
    x = np.array([[1.0, 0.0]])
    np.testing.assert_allclose(project_back(x, None, QR), [[0.6, 0.8]])
    np.testing.assert_allclose(project_back(x.T, QR, None), [[0.6], [0.8]])


@pytest.mark.parametrize("shape", [(3, 5), (4, 2)])
def test_round_trip_and_norm(shape):
    rng = np.random.default_rng(0)
    Y = rng.normal(size=shape)
    QL, QR = orth(shape[0], 1), orth(shape[1], 2)
    rotated = project(Y, QL, QR)
    assert np.linalg.norm(rotated) == pytest.approx(np.linalg.norm(Y))
    np.testing.assert_allclose(project_back(rotated, QL, QR), Y, atol=1e-12)
    np.testing.assert_allclose(project(project_back(Y, QL, QR), QL, QR), Y, atol=1e-12)
    np.testing.assert_allclose(rotated, QL.T @ Y @ QR, atol=1e-12)


# ------------------------------------------------------------------ eigenbasis


def test_eigenbasis_of_diagonal_is_sorted_permutation():
    Q = eigenbasis(np.diag([1.0, 3.0, 2.0]))
    np.testing.assert_allclose(np.abs(Q), [[0.0, 0.0, 1.0], [1.0, 0.0, 0.0], [0.0, 1.0, 0.0]], atol=1e-12)


def test_eigenbasis_two_by_two():
    Q = eigenbasis(np.array([[2.0, 1.0], [1.0, 2.0]]))
    same_up_to_column_signs(Q, np.array([[1.0, 1.0], [1.0, -1.0]]) / np.sqrt(2.0))


def test_eigenbasis_random_symmetric():
    A = np.random.default_rng(3).normal(size=(5, 5))
    P = A @ A.T
    Q = eigenbasis(P)
    np.testing.assert_allclose(Q.T @ Q, np.eye(5), atol=1e-10)
    D = Q.T @ P @ Q
    np.testing.assert_allclose(D, np.diag(np.diag(D)), atol=1e-9)
    np.testing.assert_allclose(np.diag(D), np.sort(np.linalg.eigvalsh(P))[::-1], rtol=1e-9)


# ------------------------------------------------------------------ refresh


def test_refresh_keeps_an_exact_sorted_eigenbasis():
    U = orth(4, 4)
    P = U @ np.diag([4.0, 3.0, 2.0, 1.0]) @ U.T
    V = np.arange(8.0).reshape(4, 2)
    Q, V_new = refresh_eigenbasis(P, U, V, 0)
    same_up_to_column_signs(Q, U)
    np.testing.assert_array_equal(V_new, V)


def test_refresh_sorts_columns_and_permutes_rows_of_v():
    P = np.diag([1.0, 5.0, 3.0])
    V = np.array([[10.0, 11.0], [20.0, 21.0], [30.0, 31.0]])
    Q, V_new = refresh_eigenbasis(P, np.eye(3), V, 0)
    np.testing.assert_allclose(np.abs(Q), [[0.0, 0.0, 1.0], [1.0, 0.0, 0.0], [0.0, 1.0, 0.0]], atol=1e-12)
    np.testing.assert_array_equal(V_new, [[20.0, 21.0], [30.0, 31.0], [10.0, 11.0]])


def test_refresh_permutes_columns_of_v_on_axis_one():
    P = np.diag([1.0, 5.0, 3.0])
    V = np.array([[10.0, 20.0, 30.0], [11.0, 21.0, 31.0]])
    _, V_new = refresh_eigenbasis(P, np.eye(3), V, 1)
    np.testing.assert_array_equal(V_new, [[20.0, 30.0, 10.0], [21.0, 31.0, 11.0]])


def test_refresh_is_one_power_step_with_qr():
    # S = P Q with Q = I: QR of P; the first column is P e_1 normalised, the second is orthogonal to it
    P = np.array([[3.0, 1.0], [1.0, 2.0]])
    Q, _ = refresh_eigenbasis(P, np.eye(2), np.zeros((2, 1)), 0)
    same_up_to_column_signs(Q, np.array([[3.0, -1.0], [1.0, 3.0]]) / np.sqrt(10.0))


def test_refresh_after_sorting_uses_the_largest_estimate_first():
    P = np.array([[2.0, 1.0], [1.0, 3.0]])
    Q, _ = refresh_eigenbasis(P, np.eye(2), np.zeros((1, 2)), 1)
    # e_2 has the larger estimate q^T P q = 3: first column P e_2 / |P e_2|
    same_up_to_column_signs(Q, np.array([[1.0, 3.0], [3.0, -1.0]]) / np.sqrt(10.0))


def test_repeated_refresh_converges_to_eigenvectors():
    U = orth(4, 6)
    P = U @ np.diag([8.0, 4.0, 2.0, 1.0]) @ U.T
    Q = orth(4, 7)
    V = np.zeros((4, 3))
    for _ in range(60):
        Q, V = refresh_eigenbasis(P, Q, V, 0)
        np.testing.assert_allclose(Q.T @ Q, np.eye(4), atol=1e-10)
    same_up_to_column_signs(Q, U, atol=1e-6)
