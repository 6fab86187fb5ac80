"""Cases for hj-gauss (arXiv 2605.18566): they run WITH the authors' code, in the run
sandbox, and return plain data; the checks (another sandbox, without this code) decide.

- value_estimator / gradient_estimator: the per-point heat-kernel estimators, through the
  authors' batched wrappers, on g(y) = |y|^2 (n = 2 and 3) and g(y) = a.y + b, with
  per-point Cole-Hopf coefficients.
- exact_disc: HJReachabilitySampler.solve on H = |p|^2 / 2 (the exact Cole-Hopf path) with
  the authors' disc target, at seeded points and along a ray.
- quasi_scaled: solve_quasi_linear with H = kappa |p|^2 / 2 (a Hamiltonian written here),
  for which the frozen coefficient is kappa / delta whatever the gradient estimate.
- quasi_double_integrator: solve_quasi_linear on the authors' double integrator (their
  example, scaled down), with the sampler's PRNG key after the solve.
- topology: brt_topology_signature on hand-built sets.
"""

from functools import partial

import numpy as np
import jax

jax.config.update("jax_disable_most_optimizations", True)  # compile fast: the cases are tiny

import jax.numpy as jnp  # noqa: E402

from monte_carlo.src.config import SolverConfig
from monte_carlo.src.hamiltonians import DoubleIntegratorHamiltonian, QuadraticHamiltonian
from monte_carlo.src.hamiltonians.base import Hamiltonian
from monte_carlo.src.heat_solver import mc_gradient_batch, mc_value_batch
from monte_carlo.src.hj_sampler import HJReachabilitySampler
from monte_carlo.src.initial_conditions import quadratic_cost, sphere_cost
from monte_carlo.src.topology import brt_topology_signature

import hjg_inputs as I


def linear_cost(y):
    return jnp.dot(jnp.asarray(I.LINEAR_A), y) + I.LINEAR_B


def key(offset):
    return jax.random.PRNGKey(I.SEED * 1000 + offset)


def case_value_estimator():
    out = {}
    x2 = jnp.asarray(I.query_points(1, I.M_POINTS, 2))
    c = jnp.asarray(I.C_VALUES)
    out["quadratic"] = mc_value_batch(key(1), x2, I.T_NOW, I.T_END, I.DELTA, c,
                                      quadratic_cost, I.N_SAMPLES)
    out["linear"] = mc_value_batch(key(3), x2, I.T_NOW, I.T_END, I.DELTA, c,
                                   linear_cost, I.N_SAMPLES)
    # large coefficients (the Picard loop clips c to [1e-4, 1e4]): c * g spans hundreds
    out["large_c"] = mc_value_batch(key(8), x2, I.T_NOW, I.T_END, I.DELTA, 60.0 + 0.0 * c,
                                    quadratic_cost, I.N_SAMPLES)
    out["scalar_c"] = mc_value_batch(key(4), x2, I.T_NOW, I.T_END, I.DELTA, 1.5,
                                     quadratic_cost, I.N_SAMPLES)
    return {k: np.asarray(v) for k, v in out.items()}


def case_gradient_estimator():
    out = {}
    x2 = jnp.asarray(I.query_points(1, I.M_POINTS, 2))
    c = jnp.asarray(I.C_VALUES)
    for mode in ("b17", "autodiff"):
        out[f"quadratic_{mode}"] = mc_gradient_batch(
            key(5), x2, I.T_NOW, I.T_END, I.DELTA, c, quadratic_cost, I.N_SAMPLES, mode)
        out[f"large_c_{mode}"] = mc_gradient_batch(
            key(9), x2, I.T_NOW, I.T_END, I.DELTA, 60.0 + 0.0 * c, quadratic_cost, I.N_SAMPLES, mode)
        out[f"linear_{mode}"] = mc_gradient_batch(
            key(7), x2, I.T_NOW, I.T_END, I.DELTA, c, linear_cost, I.N_SAMPLES, mode)
    return {k: np.asarray(v) for k, v in out.items()}


def case_exact_disc():
    cfg = SolverConfig(delta=I.EXACT_DELTA, num_samples=I.EXACT_SAMPLES, t_end=1.0, seed=I.SEED)
    g = partial(sphere_cost, radius=I.R_TARGET)
    sampler = HJReachabilitySampler(QuadraticHamiltonian(dim=2), g, cfg)
    pts = jnp.asarray(I.query_points(11, I.M_POINTS, 2, scale=1.3))
    ray = jnp.stack([jnp.asarray(I.RAY), jnp.zeros(I.M_POINTS)], axis=-1)
    out = {"points": np.asarray(sampler.solve(pts, I.EXACT_T))}
    out["ray"] = np.asarray(sampler.solve_exact(ray, I.EXACT_T))
    out["key"] = np.asarray(sampler.key)
    return out


class ScaledQuadraticHamiltonian(Hamiltonian):
    """H = kappa |p|^2 / 2, not flagged quadratic, so solve() takes the quasi-linear path."""

    def __init__(self, kappa, dim):
        self.kappa = kappa
        self._dim = dim

    def __call__(self, t, x, p):
        return 0.5 * self.kappa * jnp.sum(p ** 2, axis=-1)

    @property
    def state_dim(self):
        return self._dim


def case_quasi_scaled():
    out = {}
    cfg = SolverConfig(delta=I.QL_DELTA, num_samples=I.QL_SAMPLES, max_quasi_iters=I.QL_ITERS,
                       t_end=1.0, seed=I.SEED + 3)
    pts = jnp.asarray(I.query_points(21, I.M_POINTS, 2))
    for kappa in I.KAPPAS:
        sampler = HJReachabilitySampler(ScaledQuadraticHamiltonian(kappa, 2), quadratic_cost, cfg)
        v, history = sampler.solve_quasi_linear(pts, I.QL_T)
        out[f"kappa_{kappa}"] = np.asarray(v)
    sampler = HJReachabilitySampler(ScaledQuadraticHamiltonian(0.5, 2), quadratic_cost, cfg)
    out["via_solve"] = np.asarray(sampler.solve(pts, I.QL_T))
    return out


def case_quasi_double_integrator():
    cfg = SolverConfig(delta=I.DI_DELTA, num_samples=I.DI_SAMPLES, max_quasi_iters=I.DI_ITERS,
                       t_end=1.0, seed=I.SEED)
    g = partial(sphere_cost, radius=I.DI_RADIUS)
    sampler = HJReachabilitySampler(DoubleIntegratorHamiltonian(u_bound=1.0), g, cfg)
    v, history = sampler.solve_quasi_linear(jnp.asarray(I.di_points()), I.DI_T)
    return {"v": np.asarray(v), "key": np.asarray(sampler.key)}


def case_topology():
    fields, _ = I.topology_fields()
    out = {}
    for name, f in fields.items():
        s = brt_topology_signature(jnp.asarray(f))
        out[name] = [int(s.n_components), int(s.betti_1), float(s.euler_char)]
    s = brt_topology_signature(jnp.asarray(fields["smooth_annulus"]), threshold=-3.0)
    out["smooth_annulus_level_-3"] = [int(s.n_components), int(s.betti_1), float(s.euler_char)]
    s = brt_topology_signature(fields["three_discs"], threshold=-2.0)
    out["three_discs_level_-2"] = [int(s.n_components), int(s.betti_1), float(s.euler_char)]
    return out
