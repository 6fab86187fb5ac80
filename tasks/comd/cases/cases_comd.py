"""Cases for C-OMD: each decomposes a seeded test signal with the authors' comd() and
returns the modes, centre frequencies and the diagnostics comd() reports.

The checks (another sandbox, without this code) regenerate the signals from the same
seeds and compare the outputs with the first iterations of the ADMM scheme worked out
in numpy from the paper's update equations, with the properties the paper claims
(reconstruction, centre frequencies, orthogonality far below VMD's on overlapping
modes, the first mode held at DC), and with the reference's outputs.
"""

import os

import numpy as np
from comd.methods.comd.comd import COMDConfig, comd

# RCB_SEED varies every random input (rcb validate runs several seeds); each signal is
# drawn from SEED + a fixed offset, and checks/_signals.py draws it the same way.
SEED = 1000 * int(os.environ.get("RCB_SEED", "0"))
FS = 1000.0
N = 1000
T_AX = np.arange(N) / FS


def rng(offset):
    return np.random.default_rng(SEED + offset)


def tones(offset, freqs, amps, n=N):
    """A sum of cosines at freqs (Hz) with the given amplitudes and seeded phases."""
    t = np.arange(n) / FS
    phases = rng(offset).uniform(0.0, 2.0 * np.pi, size=len(freqs))
    return sum(a * np.cos(2.0 * np.pi * f * t + p) for f, a, p in zip(freqs, amps, phases))


def separated_signal():
    return tones(1, (2.0, 24.0, 288.0), (1.0, 0.25, 1.0 / 16.0))


def overlapping_signal():
    """Two components close enough that their VMD bands overlap (40 and 52 Hz)."""
    return tones(2, (8.0, 40.0, 52.0), (1.0, 0.6, 0.35))


def short_signal():
    """A short, noisy two-tone signal for the iteration-by-iteration cases."""
    g = rng(3)
    t = np.arange(48) / FS
    return np.cos(2 * np.pi * 60 * t + g.uniform(0, 6)) + 0.7 * np.cos(2 * np.pi * 110 * t) + 0.3 * g.standard_normal(48)


def result(modes, omega, info, *keys):
    out = {"modes": modes, "omega": omega}
    for key in keys:
        out[key] = info[key]
    return out


# ---- whole decompositions ---------------------------------------------------------------


def case_separated():
    return result(*comd(separated_signal(), COMDConfig(K=3)), "iterations", "recon_rel_error", "offdiag_history")


def case_overlapping_vs_vmd():
    """The paper's comparison: the same signal and initial centre frequencies, C-OMD with
    the projection against VMD (beta = 0, no projection, alpha in VMD units 2000)."""
    f = overlapping_signal()
    base = dict(K=3, init="manual", omega_init=(8 / FS, 40 / FS, 52 / FS), update="gauss_seidel")
    vmd = comd(f, COMDConfig(alpha=1 / 2000.0, beta=0.0, ns_iters=0, **base))
    omd = comd(f, COMDConfig(ns_iters=20, **base))
    return {
        "vmd": result(*vmd, "recon_rel_error", "iterations"),
        "comd": result(*omd, "recon_rel_error", "iterations", "offdiag_history"),
    }


def case_jacobi():
    """The fully parallel sweep, damped as the authors advise for overlapping bands."""
    cfg = COMDConfig(K=3, update="jacobi", relax=0.7, n_iter=60, tol=0.0)
    return result(*comd(overlapping_signal(), cfg), "recon_rel_error", "omega_history")


def case_dual_ascent():
    """Both multipliers switched on: lambda enforces the reconstruction, Gamma the
    orthogonality; a fixed number of iterations."""
    f = overlapping_signal()
    with_duals = comd(f, COMDConfig(K=3, tau_lambda=5e-5, tau_gamma=1e-3, ns_iters=0, n_iter=80, tol=0.0))
    without = comd(f, COMDConfig(K=3, ns_iters=0, n_iter=80, tol=0.0))
    return {
        "with_duals": result(*with_duals, "recon_rel_error", "offdiag_history"),
        "without": result(*without, "recon_rel_error", "offdiag_history"),
    }


def case_dc():
    """A DC offset and two tones with the first mode held at DC."""
    f = 0.8 + tones(4, (30.0, 200.0), (1.0, 0.5))
    return result(*comd(f, COMDConfig(K=3, dc=True)), "omega_history", "recon_rel_error")


def case_ortho_every():
    """The projection only on every third iteration."""
    cfg = COMDConfig(K=3, ns_iters=20, ortho_every=3, n_iter=12, tol=0.0)
    return result(*comd(overlapping_signal(), cfg), "offdiag_history")


# ---- the first iterations, for the checks to redo by hand ----------------------------------

# No mirror, a fixed number of iterations, random initial centre frequencies.
SHORT = dict(K=3, mirror=False, tol=0.0, init="random", seed=7, beta=2e-3)


def short_run(**kw):
    modes, omega, info = comd(short_signal(), COMDConfig(**{**SHORT, **kw}))
    return result(modes, omega, info, "u_hat", "omega_history")


def case_first_iterations_gauss_seidel():
    return short_run(n_iter=3, ns_iters=0, tau_lambda=5e-5, tau_gamma=1e-3)


def case_first_iterations_jacobi():
    return short_run(n_iter=3, ns_iters=0, tau_lambda=5e-5, tau_gamma=1e-3, update="jacobi", relax=0.6)


def case_first_iterations_dc():
    return short_run(n_iter=2, ns_iters=0, dc=True)


def case_first_iterations_projected():
    return short_run(n_iter=2, ns_iters=4, tau_lambda=5e-5, tau_gamma=1e-3)


def case_first_iterations_literal_projection():
    """preserve_energy=False: the literal equations, orthonormal modes after each step."""
    return short_run(n_iter=2, ns_iters=30, preserve_energy=False)


def case_first_iterations_one_newton_schulz_step():
    return short_run(n_iter=2, ns_iters=1)


# ---- a silent signal ----------------------------------------------------------------------


def case_silent_signal():
    """Nothing to decompose: every mode stays zero and Eq. (13) has no power spectrum to
    average, so each centre frequency keeps its initial value."""
    silent = np.zeros(200)
    manual = comd(silent, COMDConfig(K=3, init="manual", omega_init=(0.05, 0.1, 0.2)))
    dc = comd(silent, COMDConfig(K=3, dc=True))
    return {"manual": result(*manual, "omega_history"), "dc": result(*dc, "omega_history")}
