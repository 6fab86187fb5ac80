"""The checks agent mode may show a model (task.yaml `agent`): the Green symbol against
its closed form and the Jacobi scaling against the explicit diagonal, on the 8 x 8 random
field.

Self-contained apart from the helpers in checks/_jfft.py, which go along.
"""

import numpy as np
from _jfft import green_symbol


def test_green_symbol_visible(outputs):
    G = np.asarray(outputs["preconditioners_random"]["G_diag"])
    sym = green_symbol(G.shape[0])
    nz = sym > 0
    np.testing.assert_allclose(G[nz] * sym[nz], 1.0, rtol=1e-9)


def test_jacobi_visible(outputs, reference):
    out = outputs["preconditioners_random"]
    np.testing.assert_allclose(np.asarray(out["J_diag"]), 1 / np.sqrt(np.asarray(out["diag_K"])), rtol=1e-9)
    np.testing.assert_allclose(np.asarray(out["J_diag"]), np.asarray(reference["preconditioners_random"]["J_diag"]), rtol=1e-9)
