# Copyright (c) 2026 Antonin Sulc
# Licensed under the MIT License. See LICENSE file for details.

"""
Nonlinear PDE problems solved via Newton-Raphson iteration.

Each class provides:
    exact(x)                 -- analytical solution
    exact_grad(x)            -- analytical gradient
    source(x)                -- right-hand side
    get_train_data()         -- collocation and boundary points
    build_newton_step(…)     -- Jacobian J and negative residual -R
    build_linear_init(…)     -- linear system for warm start
    get_test_points()        -- random test points for evaluation
"""

import torch
import numpy as np

from fastlsq.device import get_device


# ======================================================================
# Helper: boundary points on the unit square
# ======================================================================

def _unit_square_boundary(n_bc):
    """Generate n_bc random points on the boundary of [0,1]^2."""
    n_side = n_bc // 4
    r = lambda n: torch.rand(n, 1, device=get_device())
    z = lambda n: torch.zeros(n, 1, device=get_device())
    o = lambda n: torch.ones(n, 1, device=get_device())
    return torch.cat([
        torch.cat([z(n_side), r(n_side)], 1),
        torch.cat([o(n_side), r(n_side)], 1),
        torch.cat([r(n_side), z(n_side)], 1),
        torch.cat([r(n_side), o(n_side)], 1),
    ], 0)


# ======================================================================
# Steady viscous Burgers equation (1-D)
# ======================================================================

class SteadyBurgers1D:
    """Steady Burgers:  u u_x - nu u_xx = f  on [0,1].

    Exact solution: u = sin(2 pi x).
    Supports continuation (viscosity marching).
    """

    def __init__(self, nu=0.1):
        self.name = f"Steady Burgers 1D (nu={nu})"
        self.dim = 1
        self.nu = nu
        self.nu_target = nu
        self.lam_bc = 200.0
        self.use_continuation = True
        self.continuation_schedule = [1.0, 0.5, 0.2, 0.1]

    def exact(self, x):
        return torch.sin(2 * np.pi * x[:, 0:1])

    def exact_grad(self, x):
        return 2 * np.pi * torch.cos(2 * np.pi * x[:, 0:1])

    def source(self, x):
        u = self.exact(x)
        ux = self.exact_grad(x)
        uxx = -(2 * np.pi) ** 2 * torch.sin(2 * np.pi * x[:, 0:1])
        return u * ux - self.nu * uxx

    def get_train_data(self, n_pde=3000, n_bc=200):
        x_pde = torch.rand(n_pde, 1, device=get_device())
        f_pde = self.source(x_pde)
        x_bc = torch.cat([
            torch.zeros(n_bc // 2, 1, device=get_device()),
            torch.ones(n_bc // 2, 1, device=get_device()),
        ], 0)
        u_bc = torch.zeros(n_bc, 1, device=get_device())
        return x_pde, [(x_bc, u_bc)], f_pde

    def build_newton_step(self, solver, x_pde, bcs, f_pde):
        basis = solver.basis
        cache = basis.cache(x_pde)
        H = basis.evaluate(x_pde, cache=cache)
        dH = basis.gradient(x_pde, cache=cache)
        ddH = basis.hessian_diag(x_pde, cache=cache)
        ux_feat = dH[:, 0, :]
        uxx_feat = ddH[:, 0, :]
        # <paper2code name="burgers newton linearization">
        u_k = H @ solver.beta
        ux_k = ux_feat @ solver.beta
        uxx_k = uxx_feat @ solver.beta
        R = u_k * ux_k - self.nu * uxx_k - f_pde
        J_pde = u_k * ux_feat + ux_k * H - self.nu * uxx_feat
        rows_J, rows_b = [J_pde], [-R]
        # </paper2code name="burgers newton linearization">
        for (x_bc, u_bc) in bcs:
            H_bc = basis.evaluate(x_bc)
            rows_J.append(self.lam_bc * H_bc)
            rows_b.append(self.lam_bc * (u_bc - H_bc @ solver.beta))
        return torch.cat(rows_J, 0), torch.cat(rows_b, 0)

    def build_linear_init(self, solver, x_pde, bcs, f_pde):
        basis = solver.basis
        cache = basis.cache(x_pde)
        ddH = basis.hessian_diag(x_pde, cache=cache)
        uxx_feat = ddH[:, 0, :]
        rows_A, rows_b = [-self.nu * uxx_feat], [f_pde]
        for (x_bc, u_bc) in bcs:
            H_bc = basis.evaluate(x_bc)
            rows_A.append(self.lam_bc * H_bc)
            rows_b.append(self.lam_bc * u_bc)
        return torch.cat(rows_A, 0), torch.cat(rows_b, 0)

    def get_test_points(self, n=5000):
        return torch.rand(n, 1, device=get_device())
