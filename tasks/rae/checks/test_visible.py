"""The checks agent mode shows: the RAE's latent layout and normalisation, and the
sampler's shifted time grids (tolerances as in test_rae.py)."""

import numpy as np

import _rae_inputs as I
from _rae import arr


def test_encode_normalization(outputs):
    out = outputs["encode"]["native"]
    mean, var = I.latent_stats()
    np.testing.assert_allclose(arr(out["normalized"]), (arr(out["plain"]) - mean) / np.sqrt(var + I.EPS),
                               rtol=1e-5, atol=1e-5)


def test_shifted_ode_grid(outputs):
    out = outputs["time_grids"]["shifted"]
    np.testing.assert_allclose(arr(out["ode_t"]), I.shifted_grid(0.0, 0.999, I.GRID_STEPS, I.ALPHA), atol=1e-6)
