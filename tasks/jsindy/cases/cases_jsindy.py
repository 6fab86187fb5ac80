"""Cases for JSINDy (joint sparse identification of dynamics with RKHS collocation):
each drives the authors' code on a small, noisy Lotka-Volterra problem and returns
what it computed.

The data are drawn from RCB_SEED by inputs/_jsindy_inputs.py (the checks import the
same generator, so they regenerate the noise and the partial-observation directions
instead of reading them back). These run with the code under test; the checks (another
sandbox) compare the outputs with the method's defining identities (the least-squares
normal equations of the state fit, the collocation and data residuals rebuilt from the
interpolant's values and derivatives, the block weighting of the joint residual, the
monotone objective of the damped active-set steps) and with the reference's outputs.
"""

import functools
import os

# CPU only, and XLA's quicker compilation: the cases run many small operations once each,
# so compiling dominates (the results agree with the default flags to rounding)
os.environ.setdefault("JAX_PLATFORMS", "cpu")
os.environ.setdefault(
    "XLA_FLAGS",
    "--xla_backend_optimization_level=0 --xla_llvm_disable_expensive_passes=true --xla_cpu_use_fusion_emitters=false",
)

import jax  # noqa: E402

jax.config.update("jax_enable_x64", True)

import jax.numpy as jnp  # noqa: E402
import numpy as np  # noqa: E402
from jax.scipy.linalg import solve_triangular  # noqa: E402
from pysindy import STLSQ  # noqa: E402

from jsindy.dynamics_model import FeatureLinearModel, PolyLib  # noqa: E402
from jsindy.kernels import ConstantKernel, GaussianRBFKernel  # noqa: E402
from jsindy.optim.optimizers import AASLMProblem  # noqa: E402
from jsindy.optim.solvers.alt_active_set_lm_solver import (  # noqa: E402
    AlternatingActiveSolve,
    pySindySparsifier,
)
from jsindy.residual_functions import (  # noqa: E402
    CollocationTerm,
    FullDataTerm,
    JointResidual,
    PartialDataTerm,
)
from jsindy.trajectory_model import CholRKHSInterpolant  # noqa: E402
from jsindy.util import get_collocation_points_weights, l2reg_lstsq  # noqa: E402

from _jsindy_inputs import N_COLLOC, STATE_FIT_LAM, problem, random_params, second_order_theta  # noqa: E402

DATA_WEIGHT, COLLOC_WEIGHT, BETA = 1.0, 1e3, 1e-3
LENGTHSCALE, THRESHOLD, INNER = 1.5, 0.05, 5
# the warm start of the alternating solve: a strongly regularized state fit, far enough
# from the optimum that some damped steps are rejected (the damping then grows)
WARM_LAM = 1.0


# ---- the model ------------------------------------------------------------------------------


@functools.lru_cache(maxsize=None)
def setup():
    t, x_true, x, v = problem()
    t, x = jnp.array(t), jnp.array(x)
    t_colloc, w_colloc = jax.jit(get_collocation_points_weights, static_argnums=1)(t, N_COLLOC, 2)
    kernel = ConstantKernel(variance=5.0) + GaussianRBFKernel(variance=10.0, lengthscale=LENGTHSCALE)
    traj = CholRKHSInterpolant(kernel=kernel)

    # the interpolant's initialize (kernel blocks, Gram matrix, Cholesky factor) traced as
    # one computation instead of op by op (compiling dominates at this size); its array
    # attributes are then replaced by the computed values
    def initialize(t, x, t_colloc):
        traj.initialize(t, x, t_colloc, {})
        return {k: a for k, a in vars(traj).items() if isinstance(a, jax.Array)}

    vars(traj).update(jax.jit(initialize)(t, x, t_colloc))
    dyn = FeatureLinearModel(reg_scaling=1.0, feature_map=PolyLib(degree=2))
    dyn.initialize(t, x, {}, (0,))
    return dict(t=t, x=x, v=jnp.array(v), t_colloc=t_colloc, w_colloc=w_colloc, traj=traj, dyn=dyn)


def whitened_evaluation(s):
    """The Cholesky-whitened evaluation matrix at the observation times (computed here,
    outside the code under test, from the kernel blocks and the Gram factor; once per run)."""
    if "whitened" not in s:
        traj = s["traj"]

        @jax.jit
        def whitened(t):
            return solve_triangular(traj.cholT.T, traj.evaluation_kmat(t, traj.time_points).T, lower=True).T

        s["whitened"] = whitened(s["t"])
    return s["whitened"]


def traced_once(f, *args):
    """f(*args) traced as one computation (one compilation instead of one per operation);
    run op by op instead if the code under test cannot be traced (e.g. it converts to numpy)."""
    try:
        return jax.jit(f)(*args)
    except (jax.errors.ConcretizationTypeError, jax.errors.TracerArrayConversionError,
            jax.errors.TracerIntegerConversionError, jax.errors.TracerBoolConversionError):
        return f(*args)


class TracedInterpolant:
    """The interpolant with its evaluations traced once per derivative order (jax.jit),
    for the alternating solve, which evaluates the trajectory op by op otherwise;
    everything else is the interpolant's own."""

    def __init__(self, traj):
        self._traj = traj
        self.predict = jax.jit(traj.predict)
        self.derivative = jax.jit(traj.derivative, static_argnums=2, static_argnames="diff_order")

    def __call__(self, t, z):
        return self.predict(t, z)

    def __getattr__(self, name):
        return getattr(self._traj, name)


def case_state_fit():
    s = setup()
    traj = s["traj"]
    y = jnp.sum(s["x"] * s["v"], axis=1)

    def fit(t, x, y, v):
        return (
            traj.get_fitted_params(t, x, lam=STATE_FIT_LAM),
            traj.get_partialobs_fitted_params(t, y, v, lam=STATE_FIT_LAM),
        )

    z_full, z_part = traced_once(fit, s["t"], s["x"], y, s["v"])
    return {
        "z_full": np.asarray(z_full),
        "z_part": np.asarray(z_part),
        "whitened": np.asarray(whitened_evaluation(s)),
    }


def case_operator_evaluation():
    s = setup()
    traj = s["traj"]
    z, _ = random_params()
    z = jnp.array(z)
    tc = s["t_colloc"]
    h = 1e-4

    # traced once as one computation (as the solver's jitted residuals trace it): quicker
    # to compile than the same operations one by one
    @jax.jit
    def evaluate(z):
        return {
            "value": traj.predict(tc, z),
            "d1": traj.derivative(tc, z, 1),
            "d2": traj.derivative(tc, z, 2),
            "value_plus": traj.predict(tc + h, z),
            "value_minus": traj.predict(tc - h, z),
            "at_obs": traj(s["t"], z),
        }

    out = {k: np.asarray(v) for k, v in evaluate(z).items()}
    out["whitened_at_obs"] = np.asarray(whitened_evaluation(s) @ z)
    return out


def case_residuals():
    s = setup()
    traj, dyn = s["traj"], s["dyn"]
    z, theta = random_params()
    z, theta = jnp.array(z), jnp.array(theta)
    y = jnp.sum(s["x"] * s["v"], axis=1)
    data = FullDataTerm(s["t"], s["x"], traj)
    partial = PartialDataTerm(s["t"], y, s["v"], traj)
    colloc = CollocationTerm(s["t_colloc"], s["w_colloc"], traj, dyn)
    dyn2 = FeatureLinearModel(reg_scaling=1.0, feature_map=PolyLib(degree=1))
    dyn2.initialize(s["t"], s["x"], {}, (0, 1))
    colloc2 = CollocationTerm(s["t_colloc"], s["w_colloc"], traj, dyn2, input_orders=(0, 1), ode_order=2)
    theta2 = jnp.array(second_order_theta())
    joint = JointResidual(data, colloc)
    tc = s["t_colloc"]

    # traced once as one computation, as inside the solver
    @jax.jit
    def evaluate(z, theta, theta2):
        xc, dxc, ddxc = traj.predict(tc, z), traj.derivative(tc, z, 1), traj.derivative(tc, z, 2)
        return {
            "data": data.residual_flat(z),
            "partial": partial.residual_flat(z),
            "colloc": colloc.residual(z, theta),
            "colloc_flat": colloc.residual_flat(z, theta),
            "colloc_second_order": colloc2.residual(z, theta2),
            "joint": joint.residual(z, theta, 0.5, 200.0),
            "pred_obs": traj.predict(s["t"], z),
            "x_c": xc,
            "dx_c": dxc,
            "ddx_c": ddxc,
            "features": dyn.feature_map(xc),
            "features_second_order": dyn2.feature_map(jnp.hstack([xc, dxc])),
        }

    out = {k: np.asarray(v) for k, v in evaluate(z, theta, theta2).items()}
    out["w_colloc"] = np.asarray(s["w_colloc"])
    return out


def case_alternating_solve():
    s = setup()
    traj, dyn = s["traj"], s["dyn"]
    tc = s["t_colloc"]
    sparsifier = pySindySparsifier(STLSQ(threshold=THRESHOLD, alpha=0.01))
    # warm start computed here (not by the code under test): a regularized state fit, and
    # starting coefficients whose support is the complement of the first refit's (the
    # solver refits before it uses them, so only their support matters: the stopping test
    # first sees the support change, then, on this problem, a stable support)
    interp = TracedInterpolant(traj)
    z0 = l2reg_lstsq(whitened_evaluation(s), s["x"].flatten(), reg=WARM_LAM)
    refit = sparsifier(dyn.feature_map(interp.predict(tc, z0)), interp.derivative(tc, z0, 1)).T.flatten()
    theta0 = jnp.array(np.where(np.abs(np.asarray(refit)) > 1e-7, 0.0, 1.0))
    data = FullDataTerm(s["t"], s["x"], traj)
    colloc = CollocationTerm(tc, s["w_colloc"], traj, dyn)
    joint = JointResidual(data, colloc)

    def F_split(z, theta):
        return joint.residual(z, theta, DATA_WEIGHT, COLLOC_WEIGHT)

    prob = AASLMProblem(
        system_dim=2,
        num_features=dyn.num_features,
        F_split=F_split,
        t_colloc=tc,
        interpolant=interp,
        state_param_regmat=traj.regmat,
        model_param_regmat=dyn.regmat,
        feature_library=dyn.feature_map,
    )
    z, theta, hist = AlternatingActiveSolve(
        z0,
        theta0,
        prob,
        beta=BETA,
        sparsifier=sparsifier,
        show_progress=False,
        max_inner_iter=INNER,
    )
    return {
        "z": np.asarray(z),
        "theta": np.asarray(theta),
        "theta0": np.asarray(theta0),
        "gnorms": [[float(g) for g in gs] for gs in hist.history["gnorms"]],
        "objval": [[float(f) for f in fs] for fs in hist.history["objval"]],
        "tag": hist.convergence_tag,
        "timings": [float(c) for c in hist.history["cumulative_time"]],
        "final_loss": objective(s, interp, dyn, z, theta),
    }


def objective(s, interp, dyn, z, theta):
    """The joint objective at (z, theta), rebuilt here in numpy from the trajectory's values
    and derivatives (the evaluations the solve has compiled already): data misfit,
    weighted collocation residual and the RKHS norm (regmat is the identity)."""
    tc = s["t_colloc"]
    x_obs = np.asarray(whitened_evaluation(s) @ z).reshape(s["x"].shape)
    xc, dxc = interp.predict(tc, z), interp.derivative(tc, z, 1)
    feats = np.asarray(dyn.feature_map(xc))
    colloc = np.sqrt(np.asarray(s["w_colloc"]))[:, None] * (np.asarray(dxc) - feats @ np.asarray(theta).reshape(feats.shape[1], -1))
    data = np.asarray(s["x"]) - x_obs
    z = np.asarray(z)
    return float(0.5 * (DATA_WEIGHT * np.sum(data**2) + COLLOC_WEIGHT * np.sum(colloc**2)) + 0.5 * BETA * z @ z)
