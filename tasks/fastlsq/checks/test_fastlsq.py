"""Checks for FastLSQ over the cases' outputs: the cyclic derivative identity and its
negative-order (integration) extension in closed form, operators assembled from it,
the Burgers Newton system worked out from the features, Newton runs (convergence to
the exact solution, the line search's decisions) and a 5-D Poisson solve.

Tolerances: everything is float64. Derivatives, operators and the Newton system are
sums of a few products, so they must agree with the closed forms to 1e-10 relative
(any order of the same arithmetic does). Newton runs go through ill-conditioned
least-squares solves; the solutions are compared at test points (not the
coefficients, which a rank-deficient system leaves free in its near-null space) to
1e-6, a thousand times above the differences that reordering the iteration's
arithmetic makes, and far below what a wrong step changes.
"""

import numpy as np
from _fl import (
    SEED,
    U_EXACT,
    X_TEST,
    burgers_inputs,
    burgers_source,
    close,
    derivative,
    features,
    key,
)

ALPHAS = [(0, 0), (1, 0), (0, 1), (2, 0), (1, 1), (0, 2), (3, 1), (2, 3), (4, 0), (1, 4), (5, 2)]
NEG_ALPHAS = [(-1, 0), (0, -1), (-1, 1), (-2, 0), (-1, -1), (2, -3)]
SOLUTION = {"rtol": 0.0, "atol": 1e-6}


# ---- the cyclic derivative identity ---------------------------------------------


def test_derivatives_closed_form(outputs, reference):
    rng, W, b = features(SEED, 2, 24, 2.0)
    x = rng.uniform(-1.0, 1.0, size=(30, 2))
    out = outputs["derivatives"]
    assert sorted(out) == sorted(key(a) for a in ALPHAS)
    for alpha in ALPHAS:
        close(out[key(alpha)], derivative(x, W, b, alpha), what=f"D^{alpha}")
        close(out[key(alpha)], reference["derivatives"][key(alpha)], what=f"D^{alpha} (reference)")


def test_derivative_orders_cycle(outputs):
    """Four derivatives in one variable bring back the feature times W^4."""
    rng, W, b = features(SEED, 2, 24, 2.0)
    out = outputs["derivatives"]
    close(out["4,0"], W[0:1] ** 4 * np.asarray(out["0,0"]), what="D^(4,0) = W0^4 phi")
    close(out["2,0"], -(W[0:1] ** 2) * np.asarray(out["0,0"]), what="D^(2,0) = -W0^2 phi")


def test_derivatives_unnormalized_3d(outputs, reference):
    rng, W, b = features(SEED + 1, 3, 16, 1.5)
    x = rng.uniform(-1.0, 1.0, size=(20, 3))
    out = outputs["derivatives_unnormalized_3d"]
    for alpha in [(1, 1, 1), (0, 2, 1), (3, 0, 2), (2, 2, 2)]:
        close(out[key(alpha)], derivative(x, W, b, alpha, normalize=False), what=f"D^{alpha}")
    close(out["2,2,2"], reference["derivatives_unnormalized_3d"]["2,2,2"])


def test_antiderivatives_closed_form(outputs, reference):
    rng, W, b = features(SEED + 2, 2, 20, 2.0)
    W[0, 3] = 0.0
    W[0, 7] = 1e-10
    W[1, 11] = -5e-9
    x = rng.uniform(-1.0, 1.0, size=(25, 2))
    out = outputs["antiderivatives"]
    for alpha in NEG_ALPHAS:
        close(out[key(alpha)], derivative(x, W, b, alpha), what=f"D^{alpha}")
        close(out[key(alpha)], reference["antiderivatives"][key(alpha)], what=f"D^{alpha} (ref)")
    # the antiderivative along x0 is -cos(Z)/W0, and the DC-guarded columns vanish
    Z = x @ W + b
    first = np.asarray(out["-1,0"])
    ok = np.abs(W[0]) > 1e-8
    close(first[:, ok], -np.cos(Z[:, ok]) / W[0, ok] / np.sqrt(20), what="int dx0")
    assert np.all(first[:, [3, 7]] == 0.0)
    assert np.all(np.asarray(out["0,-1"])[:, 11] == 0.0)
    assert np.all(np.asarray(out["-1,1"])[:, 11] != 0.0)  # x1 is differentiated, not integrated


# ---- operators ---------------------------------------------------------------------


def test_operator_closed_form(outputs, reference):
    rng, W, b = features(SEED + 3, 2, 24, 2.5)
    x = rng.uniform(0.0, 1.0, size=(40, 2))
    s, c = np.sin(x @ W + b) / np.sqrt(24), np.cos(x @ W + b) / np.sqrt(24)
    out = outputs["operator"]
    close(out["helmholtz"], -(W[0] ** 2 + W[1] ** 2) * s + 9.0 * s, what="Helmholtz")
    mixed = 0.5 * W[0] * W[1] * (-s) - 2.0 * W[1] * c + W[0] ** 3 * (-c)
    close(out["mixed"], mixed, what="0.5 u_xy - 2 u_y + u_xxx")
    k = 1.7
    close(out["learnable"], k * (-(W[1] ** 2)) * s + k * k * W[0] * c, what="c u_yy + c^2 u_x")
    grad = np.sum(-(W[1] ** 2) * s) + 2 * k * np.sum(W[0] * c)
    close(out["learnable_grad"], grad, what="d sum / dc")
    for name in ("helmholtz", "mixed", "learnable"):
        close(out[name], reference["operator"][name], what=f"{name} (reference)")


# ---- the Burgers Newton system -------------------------------------------------------


def test_burgers_newton_system_closed_form(outputs, reference):
    nu, lam_bc = 0.3, 200.0
    rng, W, b, x = burgers_inputs(SEED + 4, 30, 6.0, 50)
    beta = rng.normal(size=(30, 1))
    n = np.sqrt(30)
    Z = x @ W + b
    phi, phi_x, phi_xx = np.sin(Z) / n, W * np.cos(Z) / n, -(W**2) * np.sin(Z) / n
    u, ux, uxx = phi @ beta, phi_x @ beta, phi_xx @ beta
    R = u * ux - nu * uxx - burgers_source(x, nu)
    J = u * phi_x + ux * phi - nu * phi_xx
    x_bc = np.tile(np.array([[0.0], [1.0]]), (10, 1))
    phi_bc = np.sin(x_bc @ W + b) / n
    out = outputs["burgers_newton_system"]
    J_all, rhs = np.asarray(out["J"]), np.asarray(out["neg_R"])
    assert J_all.shape == (70, 30) and rhs.shape == (70, 1)
    close(J_all[:50], J, what="PDE rows of the Jacobian")
    close(rhs[:50], -R, what="PDE rows of -R")
    close(J_all[50:], lam_bc * phi_bc, what="boundary rows of the Jacobian")
    close(rhs[50:], -lam_bc * phi_bc @ beta, what="boundary rows of -R")
    close(J_all, reference["burgers_newton_system"]["J"], what="J (reference)")
    close(rhs, reference["burgers_newton_system"]["neg_R"], what="-R (reference)")


# ---- Newton ---------------------------------------------------------------------------------


def history(out, name, n):
    values = np.asarray(out[name], dtype=float)
    assert values.shape == (n,), f"{name}: {values.shape}, expected ({n},)"
    return values


def test_newton_converges_to_exact_solution(outputs, reference):
    out = outputs["newton_burgers"]
    res = history(out, "residual", 6)
    steps = history(out, "step_size", 6)
    assert np.all(steps == 1.0), steps  # full Newton steps near the solution
    assert res[1] < 1e-2 * res[0] and res[2] < 0.05 * res[1], res  # fast (quadratic) decrease
    u = np.asarray(out["u"])
    assert np.max(np.abs(u - U_EXACT)) < 1e-5
    assert np.max(np.abs(np.asarray(out["u_start"]) - U_EXACT)) > 1e-3  # Newton did the work
    ref = reference["newton_burgers"]
    close(res[:3], ref["residual"][:3], rtol=1e-6, atol_rel=1e-9, what="residuals")
    close(history(out, "rel_du", 6)[:3], ref["rel_du"][:3], rtol=1e-6, atol_rel=1e-9, what="rel_du")
    close(history(out, "du_norm", 6)[:3], ref["du_norm"][:3], rtol=1e-6, atol_rel=1e-9, what="du")
    np.testing.assert_allclose(u, ref["u"], **SOLUTION)


def test_newton_from_far_start(outputs, reference):
    out = outputs["newton_burgers_far_start"]
    res = history(out, "residual", 8)
    assert np.all(np.diff(res) < 0), res
    u = np.asarray(out["u"])
    assert np.max(np.abs(np.asarray(out["u_start"]) - U_EXACT)) > 1.0
    assert np.max(np.abs(u - U_EXACT)) < 1e-2
    ref = reference["newton_burgers_far_start"]
    close(res, ref["residual"], rtol=1e-6, atol_rel=1e-9, what="residuals")
    close(history(out, "step_size", 8), ref["step_size"], what="step sizes")
    np.testing.assert_allclose(u, ref["u"], **SOLUTION)


def test_line_search_shortens_long_steps(outputs, reference):
    """damping = 3: the trial step 3 overshoots, the halved step 1.5 (half a Newton
    step past the solution) cuts the residual by about half: accepted."""
    out = outputs["newton_backtracking"]
    res = history(out, "residual", 4)
    steps = history(out, "step_size", 4)
    assert np.all(steps == 1.5), steps
    assert np.all(res[1:] < 0.8 * res[:-1]), res
    ref = reference["newton_backtracking"]
    close(res, ref["residual"], rtol=1e-6, atol_rel=1e-9, what="residuals")
    np.testing.assert_allclose(out["u"], ref["u"], **SOLUTION)


def test_no_acceptable_step_keeps_the_iterate(outputs, reference):
    """Every halving of a 1e6 trial step still increases the residual: the iterate stays."""
    out = outputs["newton_no_acceptable_step"]
    res = history(out, "residual", 3)
    steps = history(out, "step_size", 3)
    assert np.all(steps < 1e6)
    close(res, np.full(3, res[0]), rtol=1e-12, what="residual unchanged")
    np.testing.assert_allclose(out["u"], out["u_start"], rtol=0, atol=1e-12)
    close(res[0], reference["newton_no_acceptable_step"]["residual"][0], rtol=1e-9)


# ---- a linear PDE in one shot ------------------------------------------------------------


def poisson_inputs():
    rng, W, b = features(SEED + 10, 5, 300, 1.0)
    x_pde = rng.uniform(0.0, 1.0, size=(900, 5))
    x_bc = rng.uniform(0.0, 1.0, size=(300, 5))
    x_bc[np.arange(300), rng.integers(0, 5, size=300)] = rng.integers(0, 2, size=300)
    x_test = rng.uniform(0.0, 1.0, size=(400, 5))
    return W, b, x_pde, x_bc, x_test


def poisson_exact(x):
    return np.sum(np.sin(np.pi / 2 * x), axis=1, keepdims=True)


def test_poisson_system(outputs, reference):
    W, b, x_pde, x_bc, _ = poisson_inputs()
    n = np.sqrt(300)
    out = outputs["poisson_5d"]
    A, rhs = np.asarray(out["A"]), np.asarray(out["rhs"])
    assert A.shape == (1200, 300) and rhs.shape == (1200, 1)
    # -Laplacian(phi) = |W|^2 phi on the collocation rows, f on the right
    close(A[:900], np.sum(W**2, axis=0) * np.sin(x_pde @ W + b) / n, what="PDE rows")
    close(rhs[:900], (np.pi**2 / 4) * poisson_exact(x_pde), what="source")
    # boundary rows: phi(x_bc) = u(x_bc), both sides scaled by one positive weight
    phi_bc = np.sin(x_bc @ W + b) / n
    weight = np.sum(A[900:] * phi_bc) / np.sum(phi_bc**2)
    assert weight > 0
    close(A[900:], weight * phi_bc, what="boundary rows")
    close(rhs[900:], weight * poisson_exact(x_bc), what="boundary values")
    close(A[:900], reference["poisson_5d"]["A"][:900], what="PDE rows (reference)")


def test_poisson_solution_is_accurate(outputs):
    *_, x_test = poisson_inputs()
    u = np.asarray(outputs["poisson_5d"]["u"])
    exact = poisson_exact(x_test)[:, 0]
    assert np.linalg.norm(u - exact) / np.linalg.norm(exact) < 5e-3
