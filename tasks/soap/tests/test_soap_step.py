"""SOAP steps against closed forms.

Key fact used below: when every gradient is G_t = U diag(d_t) V^T with fixed orthogonal
U and V, Shampoo's factors L and R have eigenvectors U and V, so SOAP's rotated gradient
is diagonal and SOAP is exactly Adam run on the scalars d_t, rotated back by U and V."""

import numpy as np
import pytest
from soap import SOAP


def orth(n, seed):
    q, _ = np.linalg.qr(np.random.default_rng(seed).normal(size=(n, n)))
    return q


def adam_displacement(ds, lr, b1, b2, eps):
    """Total displacement of Adam (bias-corrected, eps outside the root) over the rows of ds."""
    m = np.zeros_like(ds[0])
    v = np.zeros_like(ds[0])
    total = np.zeros_like(ds[0])
    for t, d in enumerate(ds, start=1):
        m = b1 * m + (1 - b1) * d
        v = b2 * v + (1 - b2) * d * d
        total += lr * (m / (1 - b1**t)) / (np.sqrt(v / (1 - b2**t)) + eps)
    return total


def svd_bases(G):
    U, _, Vt = np.linalg.svd(G)
    return U, Vt.T


def test_first_call_only_initialises():
    rng = np.random.default_rng(0)
    G = rng.normal(size=(3, 4))
    W = np.ones((3, 4))
    opt = SOAP([W], betas=(0.9, 0.8), shampoo_beta=0.7)
    opt.step([G])
    np.testing.assert_array_equal(W, np.ones((3, 4)))
    np.testing.assert_array_equal(opt.M[0], np.zeros((3, 4)))
    np.testing.assert_array_equal(opt.V[0], np.zeros((3, 4)))
    np.testing.assert_allclose(opt.L[0], 0.3 * G @ G.T)
    np.testing.assert_allclose(opt.R[0], 0.3 * G.T @ G)
    assert opt.t == 0
    for Q, P in ((opt.QL[0], opt.L[0]), (opt.QR[0], opt.R[0])):
        np.testing.assert_allclose(Q.T @ Q, np.eye(len(Q)), atol=1e-10)
        D = Q.T @ P @ Q
        np.testing.assert_allclose(D, np.diag(np.diag(D)), atol=1e-10)
        assert np.all(np.diff(np.diag(D)) <= 1e-12)


def test_first_update_is_rotated_adam_sign():
    rng = np.random.default_rng(1)
    G0 = rng.normal(size=(3, 3))
    G1 = rng.normal(size=(3, 3))
    W0 = rng.normal(size=(3, 3))
    W = W0.copy()
    opt = SOAP([W], lr=0.1, eps=1e-8, weight_decay=0.0)
    opt.step([G0])
    opt.step([G1])
    # L, R after the first call have the singular vectors of G0 as eigenvectors
    U, V = svd_bases(G0)
    rotated = U.T @ G1 @ V
    N = U @ (rotated / (np.abs(rotated) + 1e-8)) @ V.T
    np.testing.assert_allclose(W, W0 - 0.1 * N, atol=1e-7)
    np.testing.assert_allclose(opt.M[0], 0.05 * G1)
    np.testing.assert_allclose(np.sort(np.abs(opt.V[0]).ravel()), np.sort(0.05 * rotated.ravel() ** 2), atol=1e-12)


def test_second_moment_lives_in_the_eigenbasis():
    rng = np.random.default_rng(2)
    G0 = rng.normal(size=(2, 4))
    opt = SOAP([np.zeros((2, 4))], betas=(0.5, 0.5))
    opt.step([G0])
    G1 = rng.normal(size=(2, 4))
    opt.step([G1])
    rotated = opt.QL[0].T @ G1 @ opt.QR[0]
    np.testing.assert_allclose(opt.V[0], 0.5 * rotated**2, atol=1e-12)


@pytest.mark.parametrize("frequency", [1, 2])
def test_diagonalisable_gradients_give_adam_on_singular_values(frequency):
    U, V = orth(3, 3), orth(3, 4)
    d0 = np.array([3.0, 2.0, 1.0])
    # the third direction comes to dominate, so refreshes must reorder the bases
    ds = np.array(
        [[1.0, -0.5, 2.0], [0.5, 0.3, 4.0], [-1.0, 0.2, 3.0], [0.7, -0.4, 5.0], [1.2, 0.1, -4.0], [0.3, -0.2, 3.5]]
    )
    W0 = np.random.default_rng(5).normal(size=(3, 3))
    W = W0.copy()
    # eps = 1e-4 keeps round-off in the (zero) off-diagonal entries from being amplified
    opt = SOAP([W], lr=0.1, betas=(0.9, 0.95), shampoo_beta=0.5, eps=1e-4, weight_decay=0.0,
               precondition_frequency=frequency)
    opt.step([U @ np.diag(d0) @ V.T])
    for d in ds:
        opt.step([U @ np.diag(d) @ V.T])
    expected = W0 - U @ np.diag(adam_displacement(ds, 0.1, 0.9, 0.95, 1e-4)) @ V.T
    np.testing.assert_allclose(W, expected, atol=1e-7)
    # both bases were re-sorted: the dominant directions U[:, 2] and V[:, 2] now come first
    if frequency == 1:
        assert abs(U[:, 2] @ opt.QL[0][:, 0]) == pytest.approx(1.0)
        assert abs(V[:, 2] @ opt.QR[0][:, 0]) == pytest.approx(1.0)


def test_preconditioner_factors_use_shampoo_beta():
    rng = np.random.default_rng(6)
    Gs = [rng.normal(size=(2, 3)) for _ in range(3)]
    opt = SOAP([np.zeros((2, 3))], betas=(0.9, 0.99), shampoo_beta=0.5, precondition_frequency=100)
    for G in Gs:
        opt.step([G])
    weights = (0.125, 0.25, 0.5)
    np.testing.assert_allclose(opt.L[0], sum(w * G @ G.T for w, G in zip(weights, Gs)))
    np.testing.assert_allclose(opt.R[0], sum(w * G.T @ G for w, G in zip(weights, Gs)))


def test_shampoo_beta_defaults_to_beta2():
    rng = np.random.default_rng(7)
    G0, G1 = rng.normal(size=(2, 2)), rng.normal(size=(2, 2))
    opt = SOAP([np.zeros((2, 2))], betas=(0.9, 0.8))
    opt.step([G0])
    opt.step([G1])
    np.testing.assert_allclose(opt.L[0], 0.8 * 0.2 * G0 @ G0.T + 0.2 * G1 @ G1.T)


def test_refresh_every_f_updates_by_power_iteration():
    rng = np.random.default_rng(8)
    opt = SOAP([np.zeros((3, 2))], precondition_frequency=3, shampoo_beta=0.5)
    opt.step([rng.normal(size=(3, 2))])
    for _ in range(6):
        previous = {"L": opt.QL[0].copy(), "R": opt.QR[0].copy()}
        opt.step([rng.normal(size=(3, 2))])
        for side, Q, P in (("L", opt.QL[0], opt.L[0]), ("R", opt.QR[0], opt.R[0])):
            old = previous[side]
            if opt.t % 3:
                np.testing.assert_array_equal(Q, old)
                continue
            assert not np.allclose(Q, old)
            # one power step from the old basis: the first new column is P q / |P q| for
            # the old column q with the largest estimate q^T P q
            top = old[:, np.argmax(np.diag(old.T @ P @ old))]
            first = P @ top / np.linalg.norm(P @ top)
            assert abs(first @ Q[:, 0]) == pytest.approx(1.0)
            np.testing.assert_allclose(Q.T @ Q, np.eye(len(Q)), atol=1e-10)


def test_one_sided_when_a_side_is_too_large():
    rng = np.random.default_rng(9)
    G0, G1 = rng.normal(size=(2, 5)), rng.normal(size=(2, 5))
    W = np.zeros((2, 5))
    opt = SOAP([W], lr=0.1, eps=1e-8, weight_decay=0.0, max_precond_dim=3)
    opt.step([G0])
    assert opt.R[0] is None and opt.QR[0] is None
    assert opt.QL[0].shape == (2, 2)
    opt.step([G1])
    U, _ = svd_bases(G0)
    rotated = U.T @ G1
    np.testing.assert_allclose(W, -0.1 * U @ (rotated / (np.abs(rotated) + 1e-8)), atol=1e-7)


def test_no_rotation_is_adamw_with_decay_after_the_step():
    W = np.array([[2.0, -1.0]])
    opt = SOAP([W], lr=0.5, betas=(0.5, 0.5), eps=1e-12, weight_decay=0.5, max_precond_dim=0)
    opt.step([np.array([[9.0, 9.0]])])
    np.testing.assert_array_equal(W, [[2.0, -1.0]])
    opt.step([np.array([[1.0, -1.0]])])
    # first update: sign step 0.5, then decay by (1 - 0.25)
    np.testing.assert_allclose(W, [[(2.0 - 0.5) * 0.75, (-1.0 + 0.5) * 0.75]])
    opt.step([np.array([[3.0, -1.0]])])
    # m = (1.75, -0.75), v = (4.75, 0.75): m_hat = m / 0.75, v_hat = v / 0.75
    step = np.array([1.75, -0.75]) / 0.75 / np.sqrt(np.array([4.75, 0.75]) / 0.75)
    np.testing.assert_allclose(W, [(np.array([1.125, -0.375]) - 0.5 * step) * 0.75])


def test_vector_parameter_is_adam():
    b = np.array([1.0, 1.0])
    opt = SOAP([b], lr=0.1, eps=1e-12, weight_decay=0.0)
    opt.step([np.array([5.0, 5.0])])
    opt.step([np.array([2.0, -0.5])])
    np.testing.assert_allclose(b, [0.9, 1.1])
    assert opt.L[0] is None and opt.QL[0] is None


def test_weight_decay_alone():
    W = np.full((2, 2), 4.0)
    opt = SOAP([W], lr=0.1, weight_decay=0.5)
    for _ in range(3):
        opt.step([np.zeros((2, 2))])
    # the first call only initialises; two updates with zero gradients only decay
    np.testing.assert_allclose(W, np.full((2, 2), 4.0 * 0.95**2))


def test_converges_on_quadratic():
    rng = np.random.default_rng(10)
    A = rng.normal(size=(4, 4))
    H = A @ A.T + np.eye(4)  # an ill-conditioned quadratic 0.5 tr((W - T)^T H (W - T))
    T = rng.normal(size=(4, 3))
    W = np.zeros((4, 3))
    opt = SOAP([W], lr=0.01, weight_decay=0.0, precondition_frequency=5)
    for _ in range(1500):
        opt.step([H @ (W - T)])
    np.testing.assert_allclose(W, T, atol=0.05)
