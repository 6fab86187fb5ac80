"""Cases for FastLSQ: each drives the authors' code on seeded random Fourier features
and returns what it computed (feature derivatives, operator matrices, the Burgers
Newton system, Newton histories and solutions, a 5-D Poisson solve).

Frequencies W, phases b and points x come from numpy generators seeded with RCB_SEED,
so that the checks (another sandbox, without this code) regenerate them and compute
the same quantities in closed form.
"""

import os

import numpy as np
import torch

import fastlsq  # noqa: F401  (sets float64 as torch's default dtype)
from fastlsq.basis import SinusoidalBasis
from fastlsq.linalg import solve_lstsq
from fastlsq.newton import get_initial_guess, newton_solve
from fastlsq.problems import PoissonND, SteadyBurgers1D
from fastlsq.solvers import FastLSQSolver

SEED = int(os.environ.get("RCB_SEED", "0"))

# multi-indices (2-D) whose derivatives the cases evaluate; negative entries integrate
ALPHAS = [(0, 0), (1, 0), (0, 1), (2, 0), (1, 1), (0, 2), (3, 1), (2, 3), (4, 0), (1, 4), (5, 2)]
NEG_ALPHAS = [(-1, 0), (0, -1), (-1, 1), (-2, 0), (-1, -1), (2, -3)]


def features(seed, d, n, sigma):
    """W (d, n), b (1, n) as the checks regenerate them."""
    rng = np.random.default_rng(seed)
    W = rng.normal(size=(d, n)) * sigma
    b = rng.uniform(0.0, 2 * np.pi, size=(1, n))
    return rng, W, b


def key(alpha):
    return ",".join(str(a) for a in alpha)


def out(t):
    return t.detach().cpu().numpy()


# ---- the cyclic derivative identity ---------------------------------------------


def case_derivatives():
    rng, W, b = features(SEED, 2, 24, 2.0)
    x = rng.uniform(-1.0, 1.0, size=(30, 2))
    basis = SinusoidalBasis(torch.tensor(W), torch.tensor(b), normalize=True)
    xt = torch.tensor(x)
    cache = basis.cache(xt)
    return {key(a): out(basis.derivative(xt, a, cache=cache)) for a in ALPHAS}


def case_derivatives_unnormalized_3d():
    rng, W, b = features(SEED + 1, 3, 16, 1.5)
    x = rng.uniform(-1.0, 1.0, size=(20, 3))
    basis = SinusoidalBasis(torch.tensor(W), torch.tensor(b), normalize=False)
    alphas = [(1, 1, 1), (0, 2, 1), (3, 0, 2), (2, 2, 2)]
    return {key(a): out(basis.derivative(torch.tensor(x), a)) for a in alphas}


def case_antiderivatives():
    """Negative orders, with a few frequencies at or below the DC guard."""
    rng, W, b = features(SEED + 2, 2, 20, 2.0)
    W[0, 3] = 0.0
    W[0, 7] = 1e-10
    W[1, 11] = -5e-9
    x = rng.uniform(-1.0, 1.0, size=(25, 2))
    basis = SinusoidalBasis(torch.tensor(W), torch.tensor(b), normalize=True)
    return {key(a): out(basis.derivative(torch.tensor(x), a)) for a in NEG_ALPHAS}


# ---- operators ---------------------------------------------------------------------


def case_operator():
    rng, W, b = features(SEED + 3, 2, 24, 2.5)
    x = torch.tensor(rng.uniform(0.0, 1.0, size=(40, 2)))
    basis = SinusoidalBasis(torch.tensor(W), torch.tensor(b), normalize=True)
    k = 3.0
    helmholtz = basis.operator(x, [(1.0, (2, 0)), (1.0, (0, 2)), (k**2, (0, 0))])
    # dict multi-indices: 0.5 u_xy - 2 u_y + u_xxx
    mixed = basis.operator(x, [(0.5, {0: 1, 1: 1}), (-2.0, {1: 1}), (1.0, {0: 3})])
    # a learnable coefficient: the gradient reaches it
    c = torch.tensor(1.7, requires_grad=True)
    learn = basis.operator(x, [(c, (0, 2)), (c * c, {0: 1})])
    learn.sum().backward()
    return {
        "helmholtz": out(helmholtz),
        "mixed": out(mixed),
        "learnable": out(learn),
        "learnable_grad": float(c.grad),
    }


# ---- the Burgers Newton system -------------------------------------------------------


def burgers_setup(seed, n_feat, scale, n_pde, nu):
    rng, W, b = features(seed, 1, n_feat, scale)
    solver = FastLSQSolver(1, normalize=True)
    solver.add_block(hidden_size=n_feat, scale=scale)
    solver.W_list[0] = torch.tensor(W)
    solver.b_list[0] = torch.tensor(b)
    problem = SteadyBurgers1D(nu=nu)
    x_pde = torch.tensor(rng.uniform(0.0, 1.0, size=(n_pde, 1)))
    f_pde = problem.source(x_pde)
    x_bc = torch.tensor([[0.0], [1.0]]).repeat(10, 1)
    bcs = [(x_bc, torch.zeros(20, 1))]
    return rng, solver, problem, x_pde, bcs, f_pde


def case_burgers_newton_system():
    rng, solver, problem, x_pde, bcs, f_pde = burgers_setup(SEED + 4, 30, 6.0, 50, 0.3)
    solver.beta = torch.tensor(rng.normal(size=(30, 1)))
    J, neg_R = problem.build_newton_step(solver, x_pde, bcs, f_pde)
    return {"J": out(J), "neg_R": out(neg_R)}


def newton_history(history):
    return {
        name: [float(h[name]) for h in history]
        for name in ("residual", "rel_du", "du_norm", "step_size")
    }


def newton_run(seed, nu, scale, start_factor, **kwargs):
    _, solver, problem, x_pde, bcs, f_pde = burgers_setup(seed, 160, scale, 500, nu)
    solver.beta = torch.zeros(160, 1)
    get_initial_guess(solver, problem, x_pde, bcs, f_pde)
    solver.beta = solver.beta * start_factor
    x_test = torch.linspace(0.0, 1.0, 201).reshape(-1, 1)
    u_start = solver.predict(x_test)
    history = newton_solve(solver, problem, x_pde, bcs, f_pde, verbose=False, **kwargs)
    return {
        **newton_history(history),
        "u_start": out(u_start)[:, 0],
        "u": out(solver.predict(x_test))[:, 0],
    }


def case_newton_burgers():
    return newton_run(SEED + 5, 0.5, 6.0, 1.0, max_iter=6)


def case_newton_burgers_far_start():
    """From three times the linear warm start: several full Newton steps."""
    return newton_run(SEED + 6, 0.2, 8.0, 3.0, max_iter=8)


def case_newton_backtracking():
    """A first trial step of 3: the line search must shorten it."""
    return newton_run(SEED + 7, 0.5, 6.0, 1.0, max_iter=4, damping=3.0)


def case_newton_no_acceptable_step():
    """Trial steps so long that no halving satisfies the decrease condition."""
    return newton_run(SEED + 8, 0.5, 6.0, 1.0, max_iter=3, damping=1e6)


# ---- a linear PDE in one shot ------------------------------------------------------------


def case_poisson_5d():
    rng, W, b = features(SEED + 10, 5, 300, 1.0)
    solver = FastLSQSolver(5, normalize=True)
    solver.add_block(hidden_size=300, scale=1.0)
    solver.W_list[0] = torch.tensor(W)
    solver.b_list[0] = torch.tensor(b)
    problem = PoissonND()
    x_pde = torch.tensor(rng.uniform(0.0, 1.0, size=(900, 5)))
    x_bc = rng.uniform(0.0, 1.0, size=(300, 5))
    x_bc[np.arange(300), rng.integers(0, 5, size=300)] = rng.integers(0, 2, size=300)
    x_bc = torch.tensor(x_bc)
    A, rhs = problem.build(solver, x_pde, [(x_bc, problem.exact(x_bc))], problem.source(x_pde))
    solver.beta = solve_lstsq(A, rhs)
    x_test = torch.tensor(rng.uniform(0.0, 1.0, size=(400, 5)))
    return {
        "A": out(A),
        "rhs": out(rhs),
        "u": out(solver.predict(x_test))[:, 0],
    }
