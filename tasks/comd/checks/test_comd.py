"""Checks for C-OMD over the cases' outputs.

Independent of the reference: the first two or three ADMM iterations redone in numpy
from the paper's update equations (_signals.admm: the orthogonality-corrected Wiener
step, the centre-frequency update, the Newton-Schulz projection, the dual ascent), and
the properties the paper and the authors' own tests claim: reconstruction, recovered
centre frequencies, orthogonality orders of magnitude below VMD's when the bands
overlap at no cost in reconstruction, spectrally compact modes, the first mode held
at DC, the dual ascent tightening both constraints, the projection on the iterations
ortho_every selects.

Against the reference: every output within rtol 1e-7 / atol 1e-10 (signals are
normalised to unit norm inside comd; a legitimate reordering of the sums moves the
results by about 1e-15 relative, and the iteration contracts, so these bounds leave a
wide margin); iteration counts exactly (the stopping rule compares a relative change
with 1e-7, which a rounding-level difference does not move across).
"""

import numpy as np
from _close import assert_tree_close
from _signals import FS, admm, dc_signal, gram, overlapping_signal, separated_signal, short_signal

WHOLE = {"rtol": 1e-7, "atol": 1e-10}


def arr(value):
    return np.asarray(value)


def max_offdiag_correlation(modes):
    G = modes @ modes.T
    d = np.sqrt(np.diag(G))
    off = np.abs(G / np.outer(d, d) - np.eye(len(d)))
    return off.max()


def relative_error(approx, exact):
    return np.linalg.norm(approx - exact) / np.linalg.norm(exact)


def relative_offdiag(history, energy=0.5):
    """sum |G_ij|^2 over i != j, relative to the square of the signal's energy in the
    one-sided spectrum (about 1/2 for a unit-norm real signal)."""
    return arr(history) / energy**2


# ---- the first iterations, against the equations -------------------------------------------


def check_iterations(out, **kw):
    u_hat, omega, history = admm(short_signal(), **kw)
    got = arr(out["u_hat"])
    assert got.shape == u_hat.shape, f"u_hat has shape {got.shape}, expected {u_hat.shape}"
    scale = np.abs(u_hat).max()
    np.testing.assert_allclose(arr(out["omega_history"]), history, rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(arr(out["omega"]), omega, rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(got, u_hat, rtol=1e-8, atol=1e-10 * scale)


def test_first_iterations_gauss_seidel(outputs, reference):
    out = outputs["first_iterations_gauss_seidel"]
    check_iterations(out, n_iter=3, tau_lambda=5e-5, tau_gamma=1e-3)
    assert_tree_close(out, reference["first_iterations_gauss_seidel"], **WHOLE)


def test_first_iterations_jacobi(outputs, reference):
    out = outputs["first_iterations_jacobi"]
    check_iterations(out, n_iter=3, tau_lambda=5e-5, tau_gamma=1e-3, jacobi=True, relax=0.6)
    assert_tree_close(out, reference["first_iterations_jacobi"], **WHOLE)


def test_first_iterations_dc(outputs, reference):
    out = outputs["first_iterations_dc"]
    check_iterations(out, n_iter=2, dc=True)
    assert_tree_close(out, reference["first_iterations_dc"], **WHOLE)


def test_first_iterations_projected(outputs, reference):
    out = outputs["first_iterations_projected"]
    check_iterations(out, n_iter=2, ns_iters=4, tau_lambda=5e-5, tau_gamma=1e-3)
    assert_tree_close(out, reference["first_iterations_projected"], **WHOLE)


def test_first_iterations_literal_projection(outputs, reference):
    out = outputs["first_iterations_literal_projection"]
    check_iterations(out, n_iter=2, ns_iters=30, preserve_energy=False)
    # the literal Eq. (17) leaves orthonormal modes (in the quadrature dw = 1/T)
    u = arr(out["u_hat"])
    T = u.shape[1]
    np.testing.assert_allclose(gram(u[:, T // 2 :], 1.0 / T), np.eye(3), atol=1e-8)
    assert_tree_close(out, reference["first_iterations_literal_projection"], **WHOLE)


def test_first_iterations_one_newton_schulz_step(outputs, reference):
    out = outputs["first_iterations_one_newton_schulz_step"]
    check_iterations(out, n_iter=2, ns_iters=1)
    assert_tree_close(out, reference["first_iterations_one_newton_schulz_step"], **WHOLE)


def test_silent_signal(outputs, reference):
    """Eq. (13) averages the frequency over a mode's power spectrum; with no power at all
    there is nothing to average and the centre frequency stays where it was."""
    out = outputs["silent_signal"]
    for name, start in (("manual", [0.05, 0.1, 0.2]), ("dc", [0.0, 1.0 / 6.0, 1.0 / 3.0])):
        np.testing.assert_array_equal(arr(out[name]["modes"]), 0.0)
        np.testing.assert_allclose(arr(out[name]["omega"]), start, rtol=1e-12, err_msg=name)
        history = arr(out[name]["omega_history"])
        np.testing.assert_allclose(history, np.broadcast_to(start, history.shape), rtol=1e-12, err_msg=name)
    assert_tree_close(out, reference["silent_signal"], **WHOLE)


# ---- whole decompositions: the paper's claims ----------------------------------------------


def test_separated_modes(outputs):
    out = outputs["separated"]
    f = separated_signal()
    modes, omega = arr(out["modes"]), arr(out["omega"])
    assert modes.shape == (3, f.size)
    hz = omega * FS
    # 2 Hz is two periods of the 1 s signal: resolved to a fraction of a hertz
    assert abs(hz[0] - 2.0) < 0.5, hz
    np.testing.assert_allclose(hz[1:], [24.0, 288.0], rtol=0.02)
    assert out["recon_rel_error"] < 0.02
    # the modes add up to the signal (up to the bandwidth penalty and the ends)
    assert relative_error(modes.sum(0), f) < 0.03
    # the projection leaves the modes orthogonal
    assert relative_offdiag(out["offdiag_history"])[-1] < 1e-12


def test_orthogonality_beats_vmd(outputs):
    """The paper's core claim: VMD's modes are orthogonal only as a side effect of
    disjoint supports; C-OMD enforces it, at no cost in reconstruction."""
    out = outputs["overlapping_vs_vmd"]
    c_vmd = max_offdiag_correlation(arr(out["vmd"]["modes"]))
    c_omd = max_offdiag_correlation(arr(out["comd"]["modes"]))
    assert c_omd < c_vmd / 100, (c_vmd, c_omd)
    assert c_omd < 1e-8, c_omd
    assert out["comd"]["recon_rel_error"] <= 1.15 * out["vmd"]["recon_rel_error"]
    assert out["comd"]["recon_rel_error"] < 0.05
    assert relative_offdiag(out["comd"]["offdiag_history"])[-1] < 1e-12


def test_modes_stay_spectrally_compact(outputs):
    """After the projection each mode keeps its energy around its own centre frequency."""
    out = outputs["overlapping_vs_vmd"]["comd"]
    modes, omega = arr(out["modes"]), arr(out["omega"])
    spec = np.abs(np.fft.rfft(modes, axis=-1)) ** 2
    fax = np.fft.rfftfreq(modes.shape[1], d=1 / FS)
    for k in range(3):
        band = np.abs(fax - omega[k] * FS) <= 10.0
        share = spec[k, band].sum() / spec[k].sum()
        assert share > 0.9, (k, share)


def test_jacobi_sweep(outputs):
    out = outputs["jacobi"]
    f = overlapping_signal()
    assert arr(out["omega_history"]).shape == (60, 3)
    assert out["recon_rel_error"] < 0.1
    assert relative_error(arr(out["modes"]).sum(0), f) < 0.1


def test_dual_ascent_tightens_both_constraints(outputs):
    out = outputs["dual_ascent"]
    with_duals, without = out["with_duals"], out["without"]
    # lambda pulls the modes towards an exact reconstruction ...
    assert with_duals["recon_rel_error"] < 0.5 * without["recon_rel_error"]
    # ... and Gamma towards orthogonal modes, even without the projection
    last_with = arr(with_duals["offdiag_history"])[-1]
    last_without = arr(without["offdiag_history"])[-1]
    assert last_with < 1e-3 * last_without, (last_with, last_without)


def test_dc_mode(outputs):
    out = outputs["dc"]
    omega, history = arr(out["omega"]), arr(out["omega_history"])
    assert omega[0] == 0.0
    np.testing.assert_array_equal(history[:, 0], 0.0)
    np.testing.assert_allclose(omega[1:] * FS, [30.0, 200.0], rtol=0.02)
    f = dc_signal()
    assert relative_error(arr(out["modes"]).sum(0), f) < 0.08
    # the DC mode carries the offset
    np.testing.assert_allclose(arr(out["modes"])[0].mean(), 0.8, rtol=0.05)


def test_projection_every_third_iteration(outputs):
    rel = relative_offdiag(outputs["ortho_every"]["offdiag_history"])
    assert rel.shape == (12,)
    projected = np.arange(12) % 3 == 0
    assert np.all(rel[projected] < 1e-9), rel
    assert np.all(rel[~projected] > 1e-8), rel


def test_whole_runs_match_reference(outputs, reference):
    for name in ("separated", "overlapping_vs_vmd", "jacobi", "dual_ascent", "dc", "ortho_every"):
        assert_tree_close(outputs[name], reference[name], path=name, **WHOLE)
