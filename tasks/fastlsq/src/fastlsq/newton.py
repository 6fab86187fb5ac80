# Copyright (c) 2026 Antonin Sulc
# Licensed under the MIT License. See LICENSE file for details.

"""
Newton-Raphson iteration for nonlinear PDEs solved with Fast-LSQ.

Includes:
  - Tikhonov-regularised Newton steps
  - Backtracking line search with Armijo condition
  - Continuation / homotopy for advection-dominated problems
"""

import torch
import numpy as np

from fastlsq.solvers import FastLSQSolver
from fastlsq.linalg import solve_lstsq
from fastlsq.device import get_device
from fastlsq.block import unpack_beta


# ======================================================================
# Builder helper
# ======================================================================

def build_solver_with_scale(input_dim, scale, n_blocks=3, hidden=500, n_outputs=1):
    """Create a normalised FastLSQSolver with zero initial weights.

    Parameters
    ----------
    n_outputs : int
        Number of output components for vector-valued solutions. ``beta``
        is initialised to shape ``(n_features, n_outputs)``; for scalar
        problems (default ``n_outputs=1``) this matches the historical
        ``(n_features, 1)`` shape.
    """
    solver = FastLSQSolver(input_dim, normalize=True)
    for _ in range(n_blocks):
        solver.add_block(hidden_size=hidden, scale=scale)
    solver.beta = torch.zeros(solver.n_features, n_outputs, device=get_device())
    return solver


def get_initial_guess(solver, problem, x_pde, bcs, f_pde, mu=1e-10):
    """Solve the linear part of the PDE as a warm start for Newton."""
    if hasattr(problem, "build_linear_init"):
        A, b = problem.build_linear_init(solver, x_pde, bcs, f_pde)
        beta_raw = solve_lstsq(A, b, mu=mu)
        n_outputs = getattr(problem, "n_outputs", 1)
        solver.beta = unpack_beta(beta_raw, solver.n_features, n_outputs)


# ======================================================================
# Newton-Raphson driver
# ======================================================================

def newton_solve(solver, problem, x_pde, bcs, f_pde,
                 max_iter=30, tol_res=1e-12, tol_du=1e-13,
                 damping=1.0, mu=1e-10, verbose=True):
    """Newton-Raphson iteration with Tikhonov-regularised Fast-LSQ steps.

    Convergence is checked via two criteria (both must be small):

    1. Residual norm:             ||R|| < tol_res
    2. Relative solution change:  ||du|| / ||u|| < tol_du
       computed at collocation points (not via ||d_beta||).

    Parameters
    ----------
    solver : FastLSQSolver
    problem : object
        Must implement ``build_newton_step(solver, x_pde, bcs, f_pde)``.
    x_pde, bcs, f_pde :
        Training data returned by ``problem.get_train_data()``.
    max_iter : int
    tol_res, tol_du : float
    damping : float
        Initial step size for backtracking.
    mu : float
        Tikhonov regularisation parameter.
    verbose : bool

    Returns
    -------
    history : list[dict]
    """
    history = []
    n_outputs = getattr(problem, "n_outputs", 1)
    # <paper2code name="newton_solve loop (Newton step, solution-level change, Armijo backtracking)">
    N = solver.n_features
    R0 = None

    for it in range(max_iter):
        J, neg_R = problem.build_newton_step(solver, x_pde, bcs, f_pde)
        res_norm = torch.norm(neg_R).item()
        if R0 is None:
            R0 = max(res_norm, 1e-30)

        delta_beta_raw = solve_lstsq(J, neg_R, mu=mu)
        delta_beta = unpack_beta(delta_beta_raw, N, n_outputs)

        # Solution-level change (meaningful convergence metric);
        # Frobenius norm handles vector u (shape (M, k)) naturally.
        H_pde = solver.basis.evaluate(x_pde)
        u_current = H_pde @ solver.beta
        du = H_pde @ delta_beta
        u_norm = torch.norm(u_current).item()
        du_norm = torch.norm(du).item()
        rel_du = du_norm / max(u_norm, 1e-15)

        # Backtracking line search (Armijo-like)
        alpha = damping
        beta_old = solver.beta.clone()

        for _ in range(10):
            solver.beta = beta_old + alpha * delta_beta
            _, new_neg_R = problem.build_newton_step(solver, x_pde, bcs, f_pde)
            new_res = torch.norm(new_neg_R).item()
            if new_res < res_norm * (1.0 - 1e-4 * alpha) + 1e-15:
                break
            alpha *= 0.5
        else:
            # No backtracked step satisfied the Armijo condition; reject the
            # step and keep the previous iterate rather than committing a
            # point that may be worse than where we started.
            solver.beta = beta_old
    # </paper2code name="newton_solve loop (Newton step, solution-level change, Armijo backtracking)">

        history.append({
            "iter": it, "residual": res_norm,
            "rel_du": rel_du, "du_norm": du_norm,
            "step_size": alpha,
        })

        if verbose:
            print(f"  Newton {it:2d}: |R|={res_norm:.2e}  "
                  f"|du|/|u|={rel_du:.2e}  alpha={alpha:.3f}")

        if res_norm < tol_res * R0 or rel_du < tol_du:
            if verbose:
                print(f"  Converged in {it + 1} iterations "
                      f"(|R|={res_norm:.1e}, |du|/|u|={rel_du:.1e})")
            break

        if res_norm < tol_res * 0.01:
            if verbose:
                print(f"  Residual converged in {it + 1} iterations "
                      f"(|R|={res_norm:.1e})")
            break

    return history
