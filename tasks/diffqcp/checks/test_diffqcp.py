"""Checks for diffqcp: the residual map's Jacobian and its adjoint, the data derivative
and its adjoint, second-order cone projections and their Jacobians, and the derivative
of the solution map (JVP) and its adjoint (VJP).

Inputs are regenerated from RCB_SEED in _qcp.py (numpy only). Independent values: central
differences of the residual map, closed-form cone projections and Jacobians, and the
derivative of a program's optimality conditions on its fixed active set. Tolerances:
1e-6 where the values are exact up to rounding and finite-difference error (step 1e-5 on
a quadratic map), 1e-5 relative where LSMR (rtol = atol = 1e-8) solved a system, and
1e-9 to 1e-6 against the reference (the same operations, possibly reordered).
"""

import numpy as np

from _qcp import (
    PROGRAMS,
    adjoint_vectors,
    directions,
    embedding_jacobian,
    embedding_point,
    embedding_residual,
    program,
    qp_derivative,
    soc_jacobian,
    soc_points,
    soc_projection,
    upper_to_full,
    vjp_directions,
)


def _close(actual, expected, rtol, atol=0.0, what=""):
    np.testing.assert_allclose(np.asarray(actual, dtype=float), np.asarray(expected, dtype=float),
                               rtol=rtol, atol=atol, err_msg=what)


def _tree_close(actual, expected, rtol, atol):
    if isinstance(expected, dict):
        assert isinstance(actual, dict) and set(actual) == set(expected)
        for k in expected:
            _tree_close(actual[k], expected[k], rtol, atol)
    elif isinstance(expected, list):
        assert isinstance(actual, list) and len(actual) == len(expected)
        for a, e in zip(actual, expected):
            _tree_close(a, e, rtol, atol)
    else:
        _close(actual, expected, rtol, atol)


# ---- D_u Q and its adjoint ----------------------------------------------------------------


def test_embedding_jacobian_finite_differences(outputs):
    P, A, q, b, x, y, tau = embedding_point(1)
    J = embedding_jacobian(P, A, q, b, x, y, tau)
    _close(outputs["embedding_jacobian"]["DuQ"], J, rtol=1e-6, atol=1e-6, what="D_u Q")


def test_embedding_adjoint_is_transpose(outputs):
    P, A, q, b, x, y, tau = embedding_point(1)
    J = embedding_jacobian(P, A, q, b, x, y, tau)
    _close(outputs["embedding_jacobian"]["DuQ_T"], J.T, rtol=1e-6, atol=1e-6, what="D_u Q^T")


def test_embedding_jacobian_reference(outputs, reference):
    _tree_close(outputs["embedding_jacobian"], reference["embedding_jacobian"], rtol=1e-9, atol=1e-9)


# ---- D_data Q and its adjoint --------------------------------------------------------------


def _data_derivative_numpy(P, A, q, b, x, y, tau, dP, dA, dq, db):
    """D_data Q(u)[d] by central differences of Q in the data (Q is linear in the data)."""
    h = 1e-3
    plus = embedding_residual(P + h * dP, A + h * dA, q + h * dq, b + h * db, x, y, tau)
    minus = embedding_residual(P - h * dP, A - h * dA, q - h * dq, b - h * db, x, y, tau)
    return (plus - minus) / (2 * h)


def test_data_derivative_forward(outputs):
    P, A, q, b, x, y, tau = embedding_point(2)
    n, m = A.shape[1], A.shape[0]
    got = outputs["data_derivative"]["forward"]
    assert len(got) == 3
    for (dP, dA, dq, db), out in zip(directions(2, n, m, 3), got):
        expected = _data_derivative_numpy(P, A, q, b, x, y, tau, upper_to_full(dP, n), dA, dq, db)
        _close(out, expected, rtol=1e-8, atol=1e-8, what="D_data Q[d]")


def test_data_derivative_adjoint(outputs):
    """<w, D_data Q[d]> = <D_data Q^T[w], d> for every d, where d's P part is an upper
    triangle (the full perturbation is U + U^T - diag U): the adjoint's P values are
    the gradient in U with the off-diagonal entries halved (they stand for two entries
    of the symmetric matrix, as the paper's Frobenius inner product counts them)."""
    P, A, q, b, x, y, tau = embedding_point(2)
    n, m = A.shape[1], A.shape[0]
    rows, cols = np.triu_indices(n)
    weight = np.where(rows == cols, 1.0, 2.0)
    got = outputs["data_derivative"]["adjoint"]
    assert len(got) == 3
    for w, out in zip(adjoint_vectors(n, m), got):
        gP = np.zeros(rows.size)
        for k in range(rows.size):
            e = np.zeros(rows.size)
            e[k] = 1.0
            gP[k] = w @ _data_derivative_numpy(P, A, q, b, x, y, tau, upper_to_full(e, n),
                                               np.zeros((m, n)), np.zeros(n), np.zeros(m))
        gA = np.zeros((m, n))
        for i in range(m):
            for j in range(n):
                E = np.zeros((m, n))
                E[i, j] = 1.0
                gA[i, j] = w @ _data_derivative_numpy(P, A, q, b, x, y, tau, np.zeros((n, n)), E,
                                                      np.zeros(n), np.zeros(m))
        gq = np.array([w @ _data_derivative_numpy(P, A, q, b, x, y, tau, np.zeros((n, n)), np.zeros((m, n)),
                                                  np.eye(n)[j], np.zeros(m)) for j in range(n)])
        gb = np.array([w @ _data_derivative_numpy(P, A, q, b, x, y, tau, np.zeros((n, n)), np.zeros((m, n)),
                                                  np.zeros(n), np.eye(m)[j]) for j in range(m)])
        np.testing.assert_array_equal(np.asarray(out["dP_indices"]), np.stack([rows, cols], axis=1))
        _close(out["dP"], gP / weight, rtol=1e-8, atol=1e-8, what="dP")
        A_rows, A_cols = np.asarray(out["dA_indices"]).T
        _close(out["dA"], gA[A_rows, A_cols], rtol=1e-8, atol=1e-8, what="dA")
        assert A_rows.size == m * n
        _close(out["dq"], gq, rtol=1e-8, atol=1e-8, what="dq")
        _close(out["db"], gb, rtol=1e-8, atol=1e-8, what="db")


def test_data_derivative_reference(outputs, reference):
    _tree_close(outputs["data_derivative"], reference["data_derivative"], rtol=1e-9, atol=1e-9)


# ---- second-order cone projections ----------------------------------------------------------


def _soc_blocks(v):
    out, start = [], 0
    for k in (3, 3, 5, 4):
        out.append(v[start:start + k])
        start += k
    return out


def _block_diag(blocks):
    size = sum(B.shape[0] for B in blocks)
    M, start = np.zeros((size, size)), 0
    for B in blocks:
        k = B.shape[0]
        M[start:start + k, start:start + k] = B
        start += k
    return M


def test_soc_projection_closed_form(outputs):
    v = soc_points(4)
    out = outputs["soc_projection"]
    _close(out["proj"], np.concatenate([soc_projection(b) for b in _soc_blocks(v)]), rtol=1e-10, atol=1e-12)
    _close(out["jacobian"], _block_diag([soc_jacobian(b) for b in _soc_blocks(v)]), rtol=1e-9, atol=1e-10,
           what="SOC Jacobian")


def test_soc_jacobian_finite_differences(outputs):
    v = soc_points(4)
    h = 1e-6
    J = np.zeros((v.size, v.size))
    proj = lambda u: np.concatenate([soc_projection(b) for b in _soc_blocks(u)])
    for j in range(v.size):
        e = np.zeros(v.size)
        e[j] = h
        J[:, j] = (proj(v + e) - proj(v - e)) / (2 * h)
    _close(outputs["soc_projection"]["jacobian"], J, rtol=1e-6, atol=1e-6)


def test_product_projection(outputs):
    """Onto K* for K = {0}^2 x R_+^3 x Q^3 x Q^3 x Q^5 x Q^4: free, nonnegative, SOCs."""
    v = soc_points(4)
    head = np.array([0.7, -1.3, 0.4, -0.2, 0.0])
    out = outputs["soc_projection"]
    expected = np.concatenate([head[:2], np.maximum(head[2:], 0.0)] + [soc_projection(b) for b in _soc_blocks(v)])
    _close(out["product_proj"], expected, rtol=1e-10, atol=1e-12)
    # R_+'s derivative at 0 is the authors' convention (1/2), not a limit: compare it with
    # the reference, and the rest with the closed forms.
    J = np.asarray(out["product_jacobian"], dtype=float)
    expected_J = _block_diag([np.eye(2), np.diag([1.0, 0.0, 0.5])] + [soc_jacobian(b) for b in _soc_blocks(v)])
    _close(J, expected_J, rtol=1e-9, atol=1e-10)


def test_soc_projection_reference(outputs, reference):
    _tree_close(outputs["soc_projection"], reference["soc_projection"], rtol=1e-9, atol=1e-10)


# ---- the solution map's derivative and its adjoint -------------------------------------------


def _qp():
    offset, n, cones = PROGRAMS["qp"]
    P, A, q, b, x, y, s = program(offset, n, cones)
    return offset, n, A.shape[0], P, A, x, y, s


def test_jvp_qp_active_set(outputs):
    offset, n, m, P, A, x, y, s = _qp()
    got = outputs["jvp_qp"]
    assert len(got) == 3
    for (dP, dA, dq, db), out in zip(directions(offset, n, m, 3), got):
        dx, dy, ds = qp_derivative(P, A, x, y, s, upper_to_full(dP, n), dA, dq, db)
        scale = max(np.abs(dx).max(), np.abs(dy).max(), np.abs(ds).max())
        _close(out["dx"], dx, rtol=1e-5, atol=1e-6 * scale, what="dx")
        _close(out["dy"], dy, rtol=1e-5, atol=1e-6 * scale, what="dy")
        _close(out["ds"], ds, rtol=1e-5, atol=1e-6 * scale, what="ds")


def test_vjp_qp_adjoint_of_jvp(outputs):
    """<(dx, dy, ds)_j, J d_i> = <J^T (dx, dy, ds)_j, d_i> with J the solution map's
    derivative (from the active set, in numpy), P's part paired as symmetric matrices."""
    offset, n, m, P, A, x, y, s = _qp()
    rows, cols = np.triu_indices(n)
    weight = np.where(rows == cols, 1.0, 2.0)
    got = outputs["vjp_qp"]
    assert len(got) == 3
    for (wx, wy, ws), out in zip(vjp_directions("qp"), got):
        np.testing.assert_array_equal(np.asarray(out["dP_indices"]), np.stack([rows, cols], axis=1))
        A_rows, A_cols = np.asarray(out["dA_indices"]).T
        dA_out = np.zeros((m, n))
        dA_out[A_rows, A_cols] = out["dA"]
        for dP, dA, dq, db in directions(offset, n, m, 3):
            dx, dy, ds = qp_derivative(P, A, x, y, s, upper_to_full(dP, n), dA, dq, db)
            lhs = wx @ dx + wy @ dy + ws @ ds
            rhs = np.sum(np.asarray(out["dP"]) * dP * weight) + np.sum(dA_out * dA) + out["dq"] @ dq + out["db"] @ db
            scale = np.abs(wx).sum() * np.abs(dx).max() + np.abs(wy).sum() * np.abs(dy).max() + np.abs(ws).sum() * np.abs(ds).max()
            assert abs(lhs - rhs) <= 1e-6 * scale, (lhs, rhs)


def test_jvp_qp_reference(outputs, reference):
    _tree_close(outputs["jvp_qp"], reference["jvp_qp"], rtol=1e-6, atol=1e-7)


def test_vjp_qp_reference(outputs, reference):
    _tree_close(outputs["vjp_qp"], reference["vjp_qp"], rtol=1e-6, atol=1e-7)
