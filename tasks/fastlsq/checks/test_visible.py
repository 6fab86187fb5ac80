"""The checks agent mode may show a model (task.yaml `agent`): the cyclic derivative
identity on a few multi-indices, the Burgers Newton system's PDE rows, and a Newton
run that reaches the exact solution."""

import numpy as np
from _fl import SEED, U_EXACT, burgers_inputs, burgers_source, close, derivative, features


def test_derivatives_visible(outputs, reference):
    rng, W, b = features(SEED, 2, 24, 2.0)
    x = rng.uniform(-1.0, 1.0, size=(30, 2))
    for alpha in [(1, 0), (1, 1), (3, 1)]:
        k = ",".join(map(str, alpha))
        close(outputs["derivatives"][k], derivative(x, W, b, alpha), what=f"D^{alpha}")
        close(outputs["derivatives"][k], reference["derivatives"][k], what=f"D^{alpha} (ref)")


def test_burgers_newton_rows_visible(outputs):
    nu = 0.3
    rng, W, b, x = burgers_inputs(SEED + 4, 30, 6.0, 50)
    beta = rng.normal(size=(30, 1))
    Z = x @ W + b
    n = np.sqrt(30)
    phi, phi_x, phi_xx = np.sin(Z) / n, W * np.cos(Z) / n, -(W**2) * np.sin(Z) / n
    u, ux = phi @ beta, phi_x @ beta
    R = u * ux - nu * (phi_xx @ beta) - burgers_source(x, nu)
    out = outputs["burgers_newton_system"]
    close(np.asarray(out["J"])[:50], u * phi_x + ux * phi - nu * phi_xx, what="Jacobian")
    close(np.asarray(out["neg_R"])[:50], -R, what="-R")


def test_newton_visible(outputs):
    out = outputs["newton_burgers"]
    assert len(out["residual"]) == 6
    assert np.max(np.abs(np.asarray(out["u"]) - U_EXACT)) < 1e-5
