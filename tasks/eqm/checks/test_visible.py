"""The part of the eqm checks that agent mode may show."""
import numpy as np

from _eqm import c_gamma
from eqm_inputs import decay_levels, quadratic_problem


def test_truncated_decay_visible(outputs):
    ct = np.asarray(outputs["truncated_decay"]["ct"], dtype=np.float64)
    np.testing.assert_allclose(ct, c_gamma(decay_levels()), rtol=1e-5, atol=1e-5)


def test_gd_quadratic_visible(outputs):
    c, k, z = quadratic_problem()
    x = np.asarray(outputs["sampler_quadratic"]["gd"]["x"], dtype=np.float64)
    cands = [c + (1 - 0.1 * k) ** m * (z - c) for m in (6, 7)]
    assert any(np.allclose(x, cand, rtol=1e-9, atol=1e-11) for cand in cands)
