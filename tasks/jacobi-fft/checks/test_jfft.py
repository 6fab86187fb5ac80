"""Checks for the Jacobi-accelerated FFT solver (arXiv 2508.02613): they read what the
cases returned (this attempt's `outputs` and the reference's `reference`) and never the
code under test.

Tolerances: preconditioner data (Fourier symbol, Jacobi scaling, operator actions) are
deterministic sums of a few terms and FFTs of size <= 256: rtol 1e-9 against the
reference and the closed forms. PCG results depend on the Krylov iterates: iteration
counts within max(3, 5%) of the reference, solutions (up to the constant the periodic
problem leaves free) within 1e-3 relative, the homogenised coefficient within 1e-3
relative; the true residual within 10x the stopping test max(atol 1e-6, rtol 1e-5 |b|).
"""

import numpy as np
import pytest
from _jfft import centred, green_symbol, iterations_close, smooth_log10_interior
from _jfft_inputs import random_sharp_phase, random_smooth_phase, random_vectors

PRECOND_CASES = ["preconditioners_square", "preconditioners_random"]
SOLVE_CASES = ["solve_square_smoothed", "solve_square_sharp", "solve_random_smooth", "solve_random_sharp"]
RTOL = 1e-9


# ---- the log10 smoothing filter -------------------------------------------------------


def test_smoother_interior_closed_form(outputs):
    square = np.ones((2, 16, 16))
    square[:, 5:13, 5:13] *= 1e-4  # the notebook's square inclusion at 16 x 16
    out = outputs["smoother"]
    np.testing.assert_allclose(np.asarray(out["square"])[1:-1, 1:-1], smooth_log10_interior(square[0]), rtol=RTOL)
    field = random_smooth_phase(16, 1e-3, offset=11)
    np.testing.assert_allclose(np.asarray(out["random"])[1:-1, 1:-1], smooth_log10_interior(field[0]), rtol=RTOL)


def test_smoother_matches_reference_interior(outputs, reference):
    for key in ("square", "random"):
        out, ref = np.asarray(outputs["smoother"][key]), np.asarray(reference["smoother"][key])
        assert out.shape == ref.shape == (16, 16)
        np.testing.assert_allclose(out[1:-1, 1:-1], ref[1:-1, 1:-1], rtol=RTOL)
        # any boundary rule keeps the field between its extremes (a geometric mean of them)
        assert out.min() >= 1e-4 * (1 - 1e-12) and out.max() <= 1 + 1e-12


# ---- the Green preconditioner ---------------------------------------------------------


@pytest.mark.parametrize("case", PRECOND_CASES)
def test_green_symbol_closed_form(outputs, case):
    G = np.asarray(outputs[case]["G_diag"])
    n = G.shape[0]
    sym = green_symbol(n)
    nz = sym > 0
    np.testing.assert_allclose(G[nz] * sym[nz], 1.0, rtol=RTOL)


@pytest.mark.parametrize("case", PRECOND_CASES)
def test_green_matches_reference(outputs, reference, case):
    out, ref = outputs[case], reference[case]
    G, G_ref = np.asarray(out["G_diag"]), np.asarray(ref["G_diag"])
    mask = np.ones(G.shape, bool)
    mask[0, 0] = False  # the zero frequency acts on constants, which the problem leaves free
    np.testing.assert_allclose(G[mask], G_ref[mask], rtol=RTOL)
    # on zero-mean vectors the action is fixed whatever the zero frequency holds
    vecs = np.asarray(out["green_out"])
    ref_vecs = np.asarray(ref["green_out"])
    for v, r in zip(vecs, ref_vecs, strict=True):
        np.testing.assert_allclose(centred(v), centred(r), rtol=RTOL, atol=RTOL * np.abs(r).max())


@pytest.mark.parametrize("case", PRECOND_CASES)
def test_green_inverts_reference_operator(outputs, case):
    out = outputs[case]
    n = np.asarray(out["G_diag"]).shape[0]
    v = random_vectors(n, 4, {"preconditioners_square": 21, "preconditioners_random": 32}[case])
    v = v - v.mean(axis=1, keepdims=True)
    for got in (out["green_of_Kref"], out["Kref_of_green"]):
        got = np.asarray(got)
        for a, b in zip(got, v, strict=True):
            np.testing.assert_allclose(centred(a), b, rtol=1e-8, atol=1e-8 * np.abs(b).max())


@pytest.mark.parametrize("case", PRECOND_CASES)
def test_green_symmetric_positive(outputs, case):
    gram = np.asarray(outputs[case]["green_gram"])
    np.testing.assert_allclose(gram, gram.T, rtol=1e-9, atol=1e-12 * np.abs(gram).max())
    assert np.all(np.linalg.eigvalsh((gram + gram.T) / 2) > 0)


# ---- the Jacobi scaling ---------------------------------------------------------------


@pytest.mark.parametrize("case", PRECOND_CASES)
def test_jacobi_is_inverse_sqrt_diagonal(outputs, case):
    out = outputs[case]
    J, D = np.asarray(out["J_diag"]), np.asarray(out["diag_K"])
    np.testing.assert_allclose(J, 1 / np.sqrt(D), rtol=RTOL)


@pytest.mark.parametrize("case", PRECOND_CASES)
def test_jacobi_matches_reference(outputs, reference, case):
    out, ref = outputs[case], reference[case]
    np.testing.assert_allclose(np.asarray(out["J_diag"]), np.asarray(ref["J_diag"]), rtol=RTOL)
    np.testing.assert_allclose(np.asarray(out["jacobi_out"]), np.asarray(ref["jacobi_out"]), rtol=RTOL, atol=1e-300)


@pytest.mark.parametrize("case", PRECOND_CASES)
def test_jacobi_action_is_inverse_diagonal(outputs, case):
    out = outputs[case]
    D = np.asarray(out["diag_K"]).reshape(-1)
    n = np.asarray(out["J_diag"]).shape[0]
    v = random_vectors(n, 4, {"preconditioners_square": 21, "preconditioners_random": 32}[case])
    np.testing.assert_allclose(np.asarray(out["jacobi_out"]), v / D[None, :], rtol=RTOL)


# ---- the Green-Jacobi preconditioner --------------------------------------------------


@pytest.mark.parametrize("case", PRECOND_CASES)
def test_green_jacobi_is_scaled_green(outputs, case):
    out = outputs[case]
    gj, jgj = np.asarray(out["gj_out"]), np.asarray(out["j_green_j"])
    for a, b in zip(gj, jgj, strict=True):
        np.testing.assert_allclose(a, b, rtol=RTOL, atol=RTOL * np.abs(b).max())


@pytest.mark.parametrize("case", PRECOND_CASES)
def test_green_jacobi_matches_reference(outputs, reference, case):
    gj, ref = np.asarray(outputs[case]["gj_out"]), np.asarray(reference[case]["gj_out"])
    for a, b in zip(gj, ref, strict=True):
        np.testing.assert_allclose(a, b, rtol=1e-8, atol=1e-8 * np.abs(b).max())


@pytest.mark.parametrize("case", PRECOND_CASES)
def test_green_jacobi_symmetric_positive(outputs, case):
    gram = np.asarray(outputs[case]["gj_gram"])
    np.testing.assert_allclose(gram, gram.T, rtol=1e-9, atol=1e-12 * np.abs(gram).max())
    assert np.all(np.linalg.eigvalsh((gram + gram.T) / 2) > 0)


# ---- the three PCG solves -------------------------------------------------------------


@pytest.mark.parametrize("case", SOLVE_CASES)
@pytest.mark.parametrize("prec", ["G", "J", "GJ"])
def test_solve_converges(outputs, case, prec):
    out = outputs[case]
    res = out[prec]
    assert res["status"] == 0, f"{prec}: PCG did not converge"
    assert res["residual"] <= 10 * max(1e-6, 1e-5 * out["b_norm"]), res["residual"]


@pytest.mark.parametrize("case", SOLVE_CASES)
@pytest.mark.parametrize("prec", ["G", "J", "GJ"])
def test_solve_matches_reference(outputs, reference, case, prec):
    out, ref = outputs[case][prec], reference[case][prec]
    assert iterations_close(out["iterations"], ref["iterations"]), (out["iterations"], ref["iterations"])
    x, x_ref = centred(out["x"]), centred(ref["x"])
    assert np.linalg.norm(x - x_ref) <= 1e-3 * np.linalg.norm(x_ref)
    np.testing.assert_allclose(np.asarray(out["A_eff"])[0, 0], np.asarray(ref["A_eff"])[0, 0], rtol=1e-3)


@pytest.mark.parametrize("case", ["solve_random_smooth", "solve_random_sharp"])
def test_homogenised_coefficient_bounds(outputs, case):
    build = random_smooth_phase if case == "solve_random_smooth" else random_sharp_phase
    phase = build(16, 1e-4, offset=41)
    voigt, reuss = phase.mean(), 1 / (1 / phase).mean()
    for prec in ("G", "J", "GJ"):
        a = np.asarray(outputs[case][prec]["A_eff"])[0, 0]
        assert reuss * (1 - 1e-4) <= a <= voigt * (1 + 1e-4), (reuss, a, voigt)


@pytest.mark.parametrize("case", ["solve_square_smoothed", "solve_random_smooth"])
def test_green_jacobi_wins_on_smooth_data(outputs, case):
    """The paper's claim: on smooth high-contrast data the Green-Jacobi PCG needs fewer
    iterations than either the Green or the Jacobi PCG."""
    out = outputs[case]
    assert out["GJ"]["iterations"] < min(out["J"]["iterations"], out["G"]["iterations"])
