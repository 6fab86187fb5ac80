"""Cases for the Jacobi-accelerated FFT solver (src/introduction_conductivity.py, the
authors' notebook): each sets the grid, builds a material field, drives the smoothing
filter, the preconditioners and the three PCG solves, and returns plain arrays and counts.

Grids are powers of two (8, 16, 32): the pixel size is exact in binary, so the Fourier
symbol of the reference operator is exactly zero at the zero frequency only (the
notebook's test `!= 0`), and a stride-2 comb probes the diagonal exactly.
"""

import numpy as np
from _jfft_inputs import random_sharp_phase, random_smooth_phase, random_vectors

from src import introduction_conductivity as m


def _plain(x, n):
    return np.asarray(x, dtype=float).reshape(n, n)


def _explicit_diagonal(K_fun_I, n):
    """diag(K) by unit impulses, one dof at a time (independent of the comb probe)."""
    diag = np.zeros(n * n)
    for i in range(n * n):
        e = np.zeros(n * n)
        e[i] = 1.0
        diag[i] = np.asarray(K_fun_I(e)).reshape(-1)[i]
    return diag.reshape(n, n)


def _operator_probe(M, vecs):
    """M applied to each vector, and the Gram matrix y_a . M y_b (symmetry, definiteness)."""
    out = np.array([np.asarray(M(v), dtype=float).reshape(-1) for v in vecs])
    return out, vecs @ out.T


def case_smoother():
    """One application of the log10 filter to the notebook's square inclusion (16 x 16)
    and to a seeded smooth random field (16 x 16)."""
    m.problem_parameters(16)
    square = m.problem_definition(1e-4)
    field = random_smooth_phase(16, 1e-3, offset=11)
    return {
        "square": np.asarray(m.apply_smoother_log10(square), dtype=float),
        "random": np.asarray(m.apply_smoother_log10(field), dtype=float),
    }


def _preconditioner_case(n, phase, offset):
    m.problem_parameters(n)
    mat_data_ijqxy, _, K_fun_I, _ = m.system(phase)
    G_diag_ixy, Green_fun, J_diag_ixy, Jacobi_fun, GreenJacobi_fun = m.preconditioners(mat_data_ijqxy)
    # the reference (unit) conductivity operator, from the visible system()
    _, _, K_ref_I, _ = m.system(np.ones_like(phase))
    vecs = random_vectors(n, 4, offset)
    zero_mean = vecs - vecs.mean(axis=1, keepdims=True)
    green_out, green_gram = _operator_probe(Green_fun, vecs)
    jac_out, jac_gram = _operator_probe(Jacobi_fun, vecs)
    J = _plain(J_diag_ixy, n)
    # GJ on vectors v = w / J with w of zero mean: J v has no zero-frequency part, so the
    # value a Green operator gives the zero frequency (free: it acts on constants) drops out
    gj_in = zero_mean / J.reshape(1, -1)
    gj_out, gj_gram = _operator_probe(GreenJacobi_fun, gj_in)
    return {
        "G_diag": _plain(G_diag_ixy, n),
        "J_diag": J,
        "diag_K": _explicit_diagonal(K_fun_I, n),
        "green_out": green_out,
        "green_gram": green_gram,
        "green_of_Kref": np.array([np.asarray(Green_fun(np.asarray(K_ref_I(v)))).reshape(-1) for v in zero_mean]),
        "Kref_of_green": np.array([np.asarray(K_ref_I(np.asarray(Green_fun(v)).reshape(-1))).reshape(-1) for v in zero_mean]),
        "jacobi_out": jac_out,
        "jacobi_gram": jac_gram,
        "gj_out": gj_out,
        "gj_gram": gj_gram,
        "j_green_j": np.array([J.reshape(-1) * np.asarray(Green_fun(J.reshape(-1) * v)).reshape(-1) for v in gj_in]),
    }


def case_preconditioners_square():
    """The notebook's square inclusion (contrast 1e-4) after one round of ten filters, 16 x 16."""
    m.problem_parameters(16)
    phase = m.apply_filters(m.problem_definition(1e-4))
    return _preconditioner_case(16, phase, offset=21)


def case_preconditioners_random():
    """A seeded smooth random field (contrast 1e-5), 8 x 8."""
    return _preconditioner_case(8, random_smooth_phase(8, 1e-5, offset=31), offset=32)


def _solve_case(n, phase):
    m.problem_parameters(n)
    mat_data_ijqxy, E_ijqxy, K_fun_I, b_I = m.system(phase)
    G_diag_ixy, Green_fun, J_diag_ixy, Jacobi_fun, GreenJacobi_fun = m.preconditioners(mat_data_ijqxy)
    out = {"b_norm": float(np.linalg.norm(b_I))}
    for name, M in (("G", Green_fun), ("J", Jacobi_fun), ("GJ", GreenJacobi_fun)):
        x, status, n_it = m.solve_sparse(m.sp.LinearOperator((m.ndof, m.ndof), K_fun_I), b_I,
                                         m.sp.LinearOperator((m.ndof, m.ndof), M))
        grad = E_ijqxy + m.B(u_ixy=x.reshape(m.temp_shape))
        flux = m.dot21(mat_data_ijqxy, grad)
        A_eff = np.einsum('ijqxy,q->ij', flux, m.quadrature_weights) / m.domain_vol
        out[name] = {
            "x": _plain(x, n),
            "status": int(status),
            "iterations": int(n_it),
            "residual": float(np.linalg.norm(np.asarray(K_fun_I(x)).reshape(-1) - b_I)),
            "A_eff": A_eff,
        }
    return out


def case_solve_square_smoothed():
    """The notebook's experiment at 32 x 32: square inclusion, contrast 1e-4, after 3 rounds
    of ten filters (the third point of its loop)."""
    m.problem_parameters(32)
    phase = m.problem_definition(1e-4)
    for _ in range(3):
        phase = m.apply_filters(phase)
    return _solve_case(32, phase)


def case_solve_square_sharp():
    """The notebook's first point: the sharp square inclusion, 16 x 16."""
    m.problem_parameters(16)
    return _solve_case(16, m.problem_definition(1e-4))


def case_solve_random_smooth():
    """A seeded smooth random field, contrast 1e-4, 16 x 16."""
    return _solve_case(16, random_smooth_phase(16, 1e-4, offset=41))


def case_solve_random_sharp():
    """The same field thresholded into two phases, 16 x 16."""
    return _solve_case(16, random_sharp_phase(16, 1e-4, offset=41))
