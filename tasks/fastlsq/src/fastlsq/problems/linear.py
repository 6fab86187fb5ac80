# Copyright (c) 2026 Antonin Sulc
# Licensed under the MIT License. See LICENSE file for details.

"""
Linear PDE problems solved in *solver mode* (single least-squares solve).

Each class provides:
    exact(x)         -- analytical solution
    exact_grad(x)    -- analytical gradient
    source(x)        -- right-hand side (if applicable)
    get_train_data() -- collocation and boundary points
    build(solver, …) -- assemble the linear system  A beta = b
    get_test_points() -- random test points for evaluation
"""

import torch
import numpy as np

from fastlsq.utils import device
from fastlsq.block import block_concat


# ======================================================================
# Poisson equation on the unit hypercube (5-D)
# ======================================================================

class PoissonND:
    """Poisson equation  -Laplacian(u) = f  on [0,1]^5."""

    def __init__(self):
        self.name = "Poisson 5D"
        self.dim = 5

    def exact(self, x):
        return torch.sum(torch.sin(np.pi / 2 * x), dim=1, keepdim=True)

    def exact_grad(self, x):
        return (np.pi / 2) * torch.cos(np.pi / 2 * x)

    def source(self, x):
        return (np.pi ** 2 / 4) * torch.sum(
            torch.sin(np.pi / 2 * x), dim=1, keepdim=True
        )

    def get_train_data(self, n_pde=10000, n_bc=2000):
        x_pde = torch.rand(n_pde, self.dim, device=device)
        f_pde = self.source(x_pde)
        x_bc = torch.rand(n_bc, self.dim, device=device)
        mask_dim = torch.randint(0, self.dim, (n_bc,), device=device)
        mask_val = torch.randint(0, 2, (n_bc,), device=device).float()
        for i in range(n_bc):
            x_bc[i, mask_dim[i]] = mask_val[i]
        u_bc = self.exact(x_bc)
        return x_pde, [(x_bc, u_bc)], f_pde

    def build(self, slv, x_pde, bcs, f_pde):
        basis = slv.basis
        cache = basis.cache(x_pde)
        # <paper2code name="poisson system assembly">
        A = -basis.laplacian(x_pde, cache=cache)
        b = f_pde
        As, bs = [A], [b]
        for (pts, vals) in bcs:
            h = basis.evaluate(pts)
            As.append(h * 100.0)
            bs.append(vals * 100.0)
        return torch.cat(As), torch.cat(bs)
        # </paper2code name="poisson system assembly">

    def get_test_points(self, n=10000):
        return torch.rand(n, self.dim, device=device)
