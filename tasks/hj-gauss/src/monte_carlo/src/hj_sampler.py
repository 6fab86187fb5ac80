"""HJ Reachability solver via sampling (Cole-Hopf + MC Gaussian).

Two paths:
  1. **Exact Cole-Hopf** for quadratic H = (1/2)|p|^2:
     single-pass, c = 1/delta, heat-kernel expectation.
  2. **Quasi-linearization** for general H:
     iteratively freeze c = 2H/(delta|Dv|^2) and solve.
"""

from typing import Callable, Dict, List, Tuple, Optional, TYPE_CHECKING

import jax
import jax.numpy as jnp
from jax import vmap

from .config import SolverConfig
from .hamiltonians.base import Hamiltonian
from .transforms import compute_frozen_coefficient, quasi_linear_residual
from .heat_solver import (
    mc_value_batch,
    mc_gradient_batch,
)

if TYPE_CHECKING:
    from .gpu_distribution import GPUDistributor


class HJReachabilitySampler:
    """Storage-free HJ reachability solver."""

    def __init__(
        self,
        hamiltonian: Hamiltonian,
        terminal_cost_fn: Callable,
        config: SolverConfig,
        distributor: Optional["GPUDistributor"] = None,
    ):
        self.H = hamiltonian
        self.g = terminal_cost_fn
        self.cfg = config
        self.distributor = distributor
        self.key = jax.random.PRNGKey(config.seed)

    # ------------------------------------------------------------------
    # Distributed/chunked evaluation helpers
    # ------------------------------------------------------------------

    def _value_batch_distributed(
        self,
        key: jax.Array,
        eval_points: jnp.ndarray,
        t: float,
        c,
    ) -> jnp.ndarray:
        """Evaluate value function with chunking and multi-GPU dispatch."""
        M = eval_points.shape[0]
        chunk_size = self.cfg.chunk_size

        c_arr = jnp.asarray(c)

        results = []
        for i in range(0, M, chunk_size):
            chunk = eval_points[i:i + chunk_size]
            c_chunk = c_arr[i:i + chunk_size] if c_arr.ndim > 0 else c_arr
            self.key, subkey = jax.random.split(self.key)

            v_chunk = mc_value_batch(
                subkey, chunk, t, self.cfg.t_end,
                self.cfg.delta, c_chunk, self.g, self.cfg.num_samples,
            )
            results.append(v_chunk)

        return jnp.concatenate(results, axis=0)

    def _gradient_batch_distributed(
        self,
        key: jax.Array,
        eval_points: jnp.ndarray,
        t: float,
        c,
    ) -> jnp.ndarray:
        """Evaluate gradient with chunking and multi-GPU dispatch."""
        M = eval_points.shape[0]
        chunk_size = self.cfg.chunk_size

        c_arr = jnp.asarray(c)

        results = []
        for i in range(0, M, chunk_size):
            chunk = eval_points[i:i + chunk_size]
            c_chunk = c_arr[i:i + chunk_size] if c_arr.ndim > 0 else c_arr
            self.key, subkey = jax.random.split(self.key)

            Dv_chunk = mc_gradient_batch(
                subkey, chunk, t, self.cfg.t_end,
                self.cfg.delta, c_chunk, self.g, self.cfg.num_samples,
                self.cfg.gradient_mode,
            )
            results.append(Dv_chunk)

        return jnp.concatenate(results, axis=0)

    # ------------------------------------------------------------------
    # Public API
    # ------------------------------------------------------------------

    def solve(
        self, eval_points: jnp.ndarray, t: float
    ) -> jnp.ndarray:
        """Compute v(t, .) at the given evaluation points.

        Dispatches to exact or quasi-linear path based on
        ``self.H.is_quadratic``.

        Parameters
        ----------
        eval_points : (M, n) query points.
        t           : scalar time in [t_start, t_end].

        Returns
        -------
        (M,) value function estimates.
        """
        if self.H.is_quadratic:
            return self.solve_exact(eval_points, t)
        v, _ = self.solve_quasi_linear(eval_points, t)
        return v

    def solve_exact(
        self, eval_points: jnp.ndarray, t: float
    ) -> jnp.ndarray:
        """Exact Cole-Hopf path for H = (1/2)|p|^2."""
        self.key, subkey = jax.random.split(self.key)
        # <paper2code name="exact cole-hopf solve">
        c = 1.0 / self.cfg.delta
        return mc_value_batch(
            subkey, eval_points, t, self.cfg.t_end,
            self.cfg.delta, c, self.g, self.cfg.num_samples,
        )
        # </paper2code name="exact cole-hopf solve">

    def solve_quasi_linear(
        self,
        eval_points: jnp.ndarray,
        t: float,
    ) -> Tuple[jnp.ndarray, List[float]]:
        """Iterative quasi-linearization for general H (Algorithm 1 in hjgauss.pdf).

        Returns
        -------
        v_values : (M,)
        history  : list of relative residuals per iteration.
        """
        M, n = eval_points.shape

        # Coefficient bounds per Assumption 2.8
        c_min = 1e-4
        c_max = 1e4

        # Initialize: c^(0) = 1/delta (exact Cole-Hopf baseline)
        c_current = jnp.full((M,), 1.0 / self.cfg.delta, dtype=jnp.float32)

        # Initialize value from terminal cost (with chunking to avoid memory spikes)
        chunk_size = self.cfg.chunk_size
        v_init_chunks = []
        for i in range(0, M, chunk_size):
            chunk = eval_points[i:i + chunk_size]
            v_init_chunks.append(vmap(self.g)(chunk))
        v_current = jnp.concatenate(v_init_chunks, axis=0)
        # <paper2code name="quasi-linearization solve">
        history: List[float] = []

        # Check convergence every CONV_CHECK_STRIDE iterations to avoid stalling
        # the GPU with a blocking device→host transfer each step.
        CONV_CHECK_STRIDE = 5
        for iter_idx in range(self.cfg.max_quasi_iters):
            # <paper2code name="quasi-linearized picard iteration">
            # 1. Recover spatial gradient Dv^(k-1) using c^(k-1)
            #    (Algorithm 1 line 3: p_hat <- nabla v^(k-1) / |nabla v^(k-1)|)
            self.key, k1 = jax.random.split(self.key)
            Dv = self._gradient_batch_distributed(
                k1, eval_points, t, c_current
            )

            # 2. Evaluate Hamiltonian H^delta at current (x, Dv)
            #    (Algorithm 1 line 4: c^(k) <- (2/delta) H^delta(x, p_hat) / |Dv|^2)
            # Chunk Hamiltonian evaluation to avoid memory spikes
            H_chunks = []
            for i in range(0, M, chunk_size):
                chunk_x = eval_points[i:i + chunk_size]
                chunk_p = Dv[i:i + chunk_size]
                H_chunk = vmap(
                    lambda x, p: self.H(t, x, p)
                )(chunk_x, chunk_p)
                H_chunks.append(H_chunk)
            H_vals = jnp.concatenate(H_chunks, axis=0)

            # <paper2code name="freeze and clip the coefficient">
            # 3. Freeze coefficient c^(k) = (2/delta) * H / |Dv|^2
            #    Clip to [c_min, c_max] per Assumption 2.8.
            #    Note: clip, NOT abs — sign matters for contraction.
            grad_v_sq = jnp.sum(Dv ** 2, axis=-1)
            c_frozen = compute_frozen_coefficient(
                H_vals, grad_v_sq, self.cfg.delta
            )
            c_frozen = jnp.clip(c_frozen, c_min, c_max)
            # </paper2code name="freeze and clip the coefficient">

            # 4. Solve heat equation with per-point frozen c^(k)
            self.key, k2 = jax.random.split(self.key)
            v_new = self._value_batch_distributed(
                k2, eval_points, t, c_frozen
            )
            # </paper2code name="quasi-linearized picard iteration">
        # </paper2code name="quasi-linearization solve">

            # 5. Check convergence every CONV_CHECK_STRIDE iters to reduce
            #    GPU→CPU sync stalls; always check on the last allowed iteration.
            v_current = v_new
            c_current = c_frozen
            is_last = (iter_idx == self.cfg.max_quasi_iters - 1)
            if (iter_idx % CONV_CHECK_STRIDE == CONV_CHECK_STRIDE - 1) or is_last:
                residual = float(quasi_linear_residual(v_new, v_current))
                history.append(residual)
                if residual < self.cfg.quasi_tol:
                    break
            else:
                history.append(float("nan"))

        return v_current, history

    def solve_backward(
        self, eval_points: jnp.ndarray
    ) -> Dict[str, jnp.ndarray]:
        """Solve backward in time from t_end to t_start.

        Returns
        -------
        dict with keys 't' (time array), 'v' (M x num_times value array).
        """
        times = jnp.linspace(
            self.cfg.t_end, self.cfg.t_start, self.cfg.time_steps
        )
        snapshots = []
        for t_i in times:
            v = self.solve(eval_points, float(t_i))
            snapshots.append(v)
        return {
            "t": times,
            "v": jnp.stack(snapshots, axis=0),
            "eval_points": eval_points,
        }
