"""Cases for the sensitivity-balanced (CoBRAS) projections of cobras-extreme: each
drives the authors' functions on seeded inputs and returns what they computed.

The inputs are drawn from RCB_SEED by the builders of inputs/_cobras_inputs.py, which
the checks import too, so that they regenerate the inputs instead of reading them back. These run
with the code under test; the checks (another sandbox) compare the outputs with closed
forms (the balanced modes' biorthogonality and singular values, Gaussian windows, the
RBF decision function and its gradient by finite differences, translations) and with
the reference's outputs.
"""

import os
import types

# CPU only, and XLA's quicker compilation: the cases run many small operations once each,
# so compiling dominates (the results agree with the default flags to rounding)
os.environ.setdefault("JAX_PLATFORMS", "cpu")
os.environ.setdefault("XLA_FLAGS", "--xla_backend_optimization_level=0 --xla_llvm_disable_expensive_passes=true")

import jax  # noqa: E402

jax.config.update("jax_enable_x64", True)

import jax.numpy as jnp  # noqa: E402
import numpy as np  # noqa: E402
from jax import random  # noqa: E402

from _cobras_inputs import (  # noqa: E402
    SEED,
    control_inputs,
    factorization_inputs,
    frame_inputs,
    modes_inputs,
    qoi_inputs,
    quantile_inputs,
    recon_inputs,
    snapshots_and_gradients,
    svm_inputs,
)
from cobras_extreme.cobras import get_modes  # noqa: E402
from cobras_extreme.kflow.cobras_utils import get_factorization  # noqa: E402
from cobras_extreme.mnls.ctrl_utils import get_ctrl_suppresion_fn, get_quant_fn, get_svm_fns  # noqa: E402
from cobras_extreme.mnls.scripts.gen_mnls_data_backward_gauss import (  # noqa: E402
    gauss_shift,
    gauss_shift_v,
    qoi,
)
from cobras_extreme.mnls.shift_utils import (  # noqa: E402
    get_snap_shift,
    local_proj_v,
    local_projection,
    shift_modes,
    shift_modes_v,
)
from cobras_extreme.mnls.unity_utils import (  # noqa: E402
    periodic_tent_partition_of_unity,
    recon_from_z,
)


def arr(value):
    return np.asarray(value)


# ---- the balanced modes ------------------------------------------------------------------


def case_balanced_modes():
    x, grads = snapshots_and_gradients()
    modes = get_modes(jnp.array(x), jnp.array(grads), r=4)
    return {key: arr(value) for key, value in modes.items()}


def case_pod_modes():
    # with the gradients replaced by the snapshots, CoBRAS is POD (method of snapshots)
    x, _ = snapshots_and_gradients()
    modes = get_modes(jnp.array(x), jnp.array(x), r=4)
    return {key: arr(value) for key, value in modes.items()}


def case_randomized_factorization():
    grads, snaps = factorization_inputs(600)
    key = random.PRNGKey(SEED)
    subkey, (XT, YT) = get_factorization(key, jnp.array(grads), jnp.array(snaps), 3)
    return {"key_in": arr(key), "key": arr(subkey), "XT": arr(XT), "YT": arr(YT)}


# ---- the local variant: partition of unity, translations, local projections ---------------


def case_partition_of_unity():
    x = np.linspace(0, 2 * np.pi, 64, endpoint=False)
    w8, c8 = periodic_tent_partition_of_unity(jnp.array(x), 0.0, 2 * np.pi, 8)
    y = np.linspace(-1.0, 3.0, 64, endpoint=False)
    w4, c4 = periodic_tent_partition_of_unity(jnp.array(y), -1.0, 3.0, 4)
    return {"w8": arr(w8), "c8": arr(c8), "w4": arr(w4), "c4": arr(c4)}


def case_local_reconstruction():
    tens, z, phi = recon_inputs()
    return {
        "r4": arr(recon_from_z(jnp.array(tens), jnp.array(z), jnp.array(phi), 4)),
        "r6": arr(recon_from_z(jnp.array(tens), jnp.array(z), jnp.array(phi), 6)),
    }


def case_group_velocity_frame():
    x, dx, snaps = frame_inputs()
    solver = types.SimpleNamespace(k=jnp.fft.fftfreq(len(x), d=dx))  # what the shift reads
    shift_v = get_snap_shift(solver)
    t_idx = jnp.arange(len(snaps))
    return {
        "default": arr(shift_v(jnp.array(snaps), t_idx, 0.5, 1, 0)),
        "other": arr(shift_v(jnp.array(snaps), t_idx, 0.25 * dx, 2.0, 3 * dx)),
        "fraction": arr(shift_v(jnp.array(snaps), t_idx, 0.3, 1.0, 0.1)),
    }


def case_shifted_modes():
    modes, u, centers, dx, batch = modes_inputs()
    return {
        "one": arr(shift_modes(jnp.array(modes), jnp.array(centers[2]), dx)),
        "all": arr(shift_modes_v(jnp.array(modes), jnp.array(centers), dx)),
    }


def case_local_projections():
    modes, u, centers, dx, batch = modes_inputs()
    return {
        "one": arr(local_projection(jnp.array(modes), jnp.array(u), jnp.array(centers[3]), dx)),
        "all": arr(local_proj_v(jnp.array(modes), jnp.array(u), jnp.array(centers), dx)),
        "batch": arr(local_projection(jnp.array(modes), jnp.array(batch), jnp.array(centers[4]), dx)),
    }


# ---- control: the classifier's decision function, its gradient, the suppression law -------


def case_svm_functions():
    sv, s_mean, s_scale, gamma, dual, b, points = svm_inputs()
    decision, gradient = get_svm_fns(
        jnp.array(sv), jnp.array(s_mean), jnp.array(s_scale), gamma, jnp.array(dual), jnp.array(b)
    )
    return {"decision": arr(decision(jnp.array(points))), "gradient": arr(gradient(jnp.array(points)))}


def case_suppression_control():
    state, psi, phi0, (sv, s_mean, s_scale, gamma, dual, b) = control_inputs()
    decision, gradient = get_svm_fns(
        jnp.array(sv), jnp.array(s_mean), jnp.array(s_scale), gamma, jnp.array(dual), jnp.array(b)
    )
    control = get_ctrl_suppresion_fn(decision, gradient)
    return arr(control(jnp.array(state), jnp.array(psi), jnp.array(phi0)))


def case_quantile_bins():
    edges, n_quantiles, x = quantile_inputs()
    return arr(get_quant_fn(jnp.array(edges), n_quantiles)(jnp.array(x)))


# ---- the localized quantity of interest --------------------------------------------------


def case_gaussian_window():
    x = np.linspace(-20.0, 40.0, 601)
    return {
        "single": arr(gauss_shift(jnp.array(x), 3.0, 0.5, 1.5, 2.0)),
        "moving": arr(gauss_shift_v(jnp.array(x), jnp.arange(5.0), 0.75, 2.5, -1.0)),
    }


def case_localized_qoi():
    traj, x, t, vg, length, x0, dx = qoi_inputs()
    return arr(qoi(jnp.array(traj), jnp.array(x), jnp.array(t), vg, length, x0, dx))
