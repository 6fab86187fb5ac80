"""The checks agent mode shows: the Sinkhorn normalisation of a matrix whose rows and
columns are already balanced, and the dual-scale quantisation of single 64 x 64 tiles,
each against the reference's outputs (tolerances as in test_sinq.py)."""

import numpy as np

from _sinq import arr, assert_close, assert_codes_close, balanced_weights, imbalance


def test_balanced_matrix_scales_are_constant(outputs, reference):
    out = outputs["sinkhorn_balanced"]
    for key in ("mu1", "mu2"):
        mu = arr(out[key])
        np.testing.assert_allclose(mu, np.full_like(mu, mu.mean()), rtol=1e-4, err_msg=key)
    assert imbalance(out["scaled"]) <= 1.1
    ratio = arr(out["scaled"]) / arr(reference["sinkhorn_balanced"]["scaled"])
    np.testing.assert_allclose(ratio, ratio.mean(), rtol=1e-4)
    W = arr(out["scaled"]) * arr(out["mu1"]) * arr(out["mu2"])
    np.testing.assert_allclose(W, balanced_weights(), rtol=1e-5, atol=1e-9)


def test_dual_scale_tiles(outputs, reference):
    for name, ref in reference["dual_scale_tile"].items():
        out = outputs["dual_scale_tile"][name]
        assert_codes_close(out["q"], ref["q"], f"{name}: q")
        assert_codes_close(out["z"], ref["z"], f"{name}: z", share=0.02)
        for key in ("s1", "s2"):
            assert_close(out[key], ref[key], rtol=1e-4, what=f"{name}: {key}")
