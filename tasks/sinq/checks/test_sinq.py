"""Checks for SINQ (arXiv 2509.22944). They run without the code under test: they
regenerate the seeded weight matrices in numpy (checks/_sinq.py) and test what the cases
returned against properties of the method worked out here, and against the reference
code's outputs.

Tolerances. Everything runs in float32. A correct implementation may order its float32
work differently (divide by exp(a) exp(b) or by exp(a + b), normalise before or after
scaling, ...), which moves results by a few ulps per operation, about 1e-6 relative after
the 8-24 normalisation steps; scales are compared at rtol 1e-4 (with a small atol where
values can be zero). Integer codes and shifts are rounded values: a reordering may flip a
rounding tie, so a few codes (0.5%, shifts 2%) may differ by one level.
"""

import numpy as np
import pytest

from _sinq import (
    SEED, arr, assert_close, assert_codes_close, awq_scale, check_error_bound,
    balanced_weights, check_rtn_closed_form, imbalance, weights,
)

SINKHORN = {  # as cases/cases_sinq.py: name -> weights args
    "square_order16": (1, 64, 64),
    "tall_order8": (2, 96, 64, 1.2, 5),
    "wide_heavy": (3, 32, 128, 0.5, 0, True),
    "no_early_stop": (4, 64, 64, 1.0, 2),
    "low_clip_max": (5, 48, 48, 0.8, 1),
    "high_clip_min": (8, 48, 48, 1.5, 1),
    "zero_steps": (6, 16, 16),
}
TILE = {  # name -> (weights args, bits)
    "sinq": ((10, 64, 64), 4),
    "sinq_strong_scales": ((11, 64, 64, 1.2, 4), 3),
    "rtn": ((12, 64, 64), 4),
    "sinq_noz": ((13, 64, 64), 4),
}
TILED = {  # name -> (weights args, block actually used)
    "sinq_64": ((20, 48, 256, 0.5, 2), 64),
    "sinq_adjusted_block": ((21, 40, 96, 0.5, 2), 32),
    "rtn_32": ((22, 32, 128, 0.5, 2), 32),
    "sinq_awq_64": ((24, 32, 128, 0.5, 2), 64),
    "sinq_awq_64_without_awq": ((24, 32, 128, 0.5, 2), 64),
}
QUANT = {  # name -> (weights args, bits)
    "mild_sinq_4": ((30, 64, 256, 0.2, 0), 4),
    "mild_rtn_4": ((30, 64, 256, 0.2, 0), 4),
    "mild_sinq_3": ((30, 64, 256, 0.2, 0), 3),
    "heavy_sinq_4": ((31, 64, 128, 0.2, 0, True), 4),
    "packed_sinq_3": ((32, 36, 128, 0.2, 0), 3),
}


# ---------------------------------------------------------------- Sinkhorn normalisation

@pytest.mark.parametrize("name", list(SINKHORN))
def test_sinkhorn_scaled_is_weights_over_both_scales(outputs, name):
    """The normalised matrix is W divided by the column scale and by the row scale, and
    both scales stay in the range the log-domain clip allows (exp(-0.3) .. exp(10))."""
    out = outputs["sinkhorn"][name]
    W = weights(*SINKHORN[name])
    mu1, mu2 = arr(out["mu1"]), arr(out["mu2"])
    assert mu1.shape == (W.shape[1],) and mu2.shape == (W.shape[0], 1)
    assert_close(out["scaled"], W / mu1 / mu2, rtol=1e-5, atol=1e-9, what="scaled")
    for mu in (mu1, mu2):
        assert mu.min() >= np.exp(-0.3) * (1 - 1e-5) and mu.max() <= np.exp(10.0) * (1 + 1e-5)


@pytest.mark.parametrize("name", list(SINKHORN))
def test_sinkhorn_keeps_the_least_imbalanced(outputs, reference, name):
    """The returned scales are the most balanced ones met, and W itself (unit scales) is
    one of them: the imbalance never grows, and it comes down as far as the reference's."""
    W = weights(*SINKHORN[name])
    got = imbalance(outputs["sinkhorn"][name]["scaled"])
    ref = imbalance(reference["sinkhorn"][name]["scaled"])
    assert got <= imbalance(W) * (1 + 1e-5)
    assert got <= ref * (1 + 1e-4), f"imbalance {got:.4f}, the reference reaches {ref:.4f}"


@pytest.mark.parametrize("name", list(SINKHORN))
def test_sinkhorn_matches_reference(outputs, reference, name):
    out, ref = outputs["sinkhorn"][name], reference["sinkhorn"][name]
    for key in ("mu1", "mu2", "scaled"):
        assert_close(out[key], ref[key], rtol=1e-4, atol=1e-8, what=f"{name}: {key}")


def test_sinkhorn_zero_steps_is_identity(outputs):
    out = outputs["sinkhorn"]["zero_steps"]
    np.testing.assert_array_equal(arr(out["mu1"]), np.ones(16))
    np.testing.assert_array_equal(arr(out["mu2"]), np.ones((16, 1)))
    assert_close(out["scaled"], weights(*SINKHORN["zero_steps"]), rtol=0, what="scaled")


def test_sinkhorn_balanced_matrix(outputs, reference):
    """Rows and columns that already share one standard deviation: every row (column) is
    scaled alike, so the scales are constant vectors and the imbalance stays near 1."""
    out = outputs["sinkhorn_balanced"]
    for key in ("mu1", "mu2"):
        mu = arr(out[key])
        np.testing.assert_allclose(mu, np.full_like(mu, mu.mean()), rtol=1e-4, err_msg=key)
    assert imbalance(out["scaled"]) <= 1.1
    # which near-equal iterate is kept is float32 noise here (the imbalance stays at ~1.02
    # throughout), so the constants are not compared with the reference's: the scaled
    # matrix is the input up to one factor
    W = arr(out["scaled"]) * arr(out["mu1"]) * arr(out["mu2"])
    ratio = arr(out["scaled"]) / arr(reference["sinkhorn_balanced"]["scaled"])
    np.testing.assert_allclose(ratio, ratio.mean(), rtol=1e-4)
    np.testing.assert_allclose(W, balanced_weights(), rtol=1e-5, atol=1e-9)


# ------------------------------------------------------------- dual-scale tile quantisation

@pytest.mark.parametrize("name", ["sinq", "sinq_strong_scales", "rtn"])
def test_dual_scale_tile_closed_form(outputs, name):
    args, bits = TILE[name]
    t = outputs["dual_scale_tile"][name]
    W = weights(*args)
    assert arr(t["s2"]).shape == (1, W.shape[1]) and arr(t["s1"]).shape == (W.shape[0], 1)
    if name == "rtn":  # plain RTN: the normalisation is undone, one scale per row
        np.testing.assert_allclose(arr(t["s2"]), 1.0, rtol=0, atol=0)
    else:  # SINQ: a real second (column) scale
        assert arr(t["s2"]).std() > 0.05 * arr(t["s2"]).mean()
    check_rtn_closed_form(W, t["q"], t["s1"], t["s2"], t["z"], 2**bits - 1, name)


def test_dual_scale_tile_symmetric(outputs):
    """'noz': symmetric RTN on the normalised tile, codes shifted by one constant 7."""
    t = outputs["dual_scale_tile"]["sinq_noz"]
    W = arr(weights(*TILE["sinq_noz"][0]))
    s1, s2, q = arr(t["s1"]), arr(t["s2"]), arr(t["q"])
    assert arr(t["z"]).size == 1 and float(arr(t["z"]).ravel()[0]) == 7.0
    V = W / s2
    np.testing.assert_allclose(s1, np.abs(V).max(axis=1, keepdims=True) / 6, rtol=2e-5)
    assert_codes_close(q, np.clip(np.round(V / s1), -8, 6) + 7, "codes")
    check_error_bound(W, (q - 7) * s1 * s2, s1 * s2, "noz")


@pytest.mark.parametrize("name", list(TILE))
def test_dual_scale_tile_matches_reference(outputs, reference, name):
    out, ref = outputs["dual_scale_tile"][name], reference["dual_scale_tile"][name]
    assert_codes_close(out["q"], ref["q"], f"{name}: q")
    assert_codes_close(out["z"], ref["z"], f"{name}: z", share=0.02)
    for key in ("s1", "s2"):
        assert_close(out[key], ref[key], rtol=1e-4, what=f"{name}: {key}")


# ------------------------------------------------------------------ tiled quantisation

def _groups(W, s2, block):
    """W cut into tiles of `block` columns, one row of a tile per group (row h, tile j at
    h * n_tiles + j), with the column scales of each group's tile."""
    H, C = W.shape
    n = C // block
    return W.reshape(-1, block), arr(s2).reshape(n, block)[np.arange(H * n) % n]


@pytest.mark.parametrize("name", ["sinq_64", "sinq_adjusted_block", "rtn_32", "sinq_awq_64"])
def test_tiled_closed_form(outputs, name):
    args, block = TILED[name]
    t = outputs["tiled"][name]
    W = arr(weights(*args))
    H, C = W.shape
    Q, s1, s2, z = (arr(t[k]) for k in ("Q", "s1", "s2", "z"))
    assert Q.shape == (H * C // block, block), f"codes {Q.shape}: tiles of {block} columns"
    assert s1.shape == z.shape == (H * C // block, 1) and s2.shape == (1, C)
    if name == "rtn_32":
        np.testing.assert_allclose(s2, 1.0, rtol=0, atol=0)
    Wg, S2 = _groups(W, s2, block)
    check_rtn_closed_form(Wg, Q, s1, S2, z, 15, name)


def test_tiled_awq_scale_folds_into_column_scale(outputs):
    """The activation-aware scale multiplies the normalised tile, so the column scale
    stored for dequantisation is the Sinkhorn column scale divided by it."""
    t = outputs["tiled"]
    np.testing.assert_allclose(
        arr(t["sinq_awq_64"]["s2"]) * arr(awq_scale()), arr(t["sinq_awq_64_without_awq"]["s2"]), rtol=1e-5
    )


@pytest.mark.parametrize("name", list(TILED))
def test_tiled_matches_reference(outputs, reference, name):
    out, ref = outputs["tiled"][name], reference["tiled"][name]
    assert_codes_close(out["Q"], ref["Q"], f"{name}: Q")
    assert_codes_close(out["z"], ref["z"], f"{name}: z", share=0.02)
    for key in ("s1", "s2"):
        assert_close(out[key], ref[key], rtol=1e-4, what=f"{name}: {key}")


# ------------------------------------------------------- Quantizer: quantise, dequantise

@pytest.mark.parametrize("name", list(QUANT))
def test_quantizer_dequantize_closed_form(outputs, name):
    """Dequantisation: (codes - shift) * row scale per group of 64, back to the matrix's
    shape, times the column scale; within one quantisation step of W."""
    args, bits = QUANT[name]
    r = outputs["quantizer_roundtrip"][name]
    W = arr(weights(*args))
    Wq, s, s2, z = (arr(r[k]) for k in ("W_q", "scale", "scale2", "zero"))
    expected = ((Wq - z) * s).reshape(W.shape) * s2
    assert_close(r["W_r"], expected, rtol=1e-5, atol=1e-7, what="W_r")
    check_error_bound(W, r["W_r"], (s * np.ones((1, 64))).reshape(W.shape) * s2, name)
    if "rtn" in name or "heavy" in name:  # RTN, or SINQ falling back to RTN (kurtosis > 5)
        np.testing.assert_allclose(s2, 1.0, rtol=0, atol=0)
    else:
        Wg, S2 = _groups(W, s2, 64)
        check_rtn_closed_form(Wg, Wq, s, S2, z, 2**bits - 1, name)


@pytest.mark.parametrize("name", list(QUANT))
def test_quantizer_matches_reference(outputs, reference, name):
    out, ref = outputs["quantizer_roundtrip"][name], reference["quantizer_roundtrip"][name]
    assert_codes_close(out["W_q"], ref["W_q"], f"{name}: codes")
    assert_codes_close(out["zero"], ref["zero"], f"{name}: zero", share=0.02)
    for key in ("scale", "scale2"):
        assert_close(out[key], ref[key], rtol=1e-4, what=f"{name}: {key}")


def test_dual_scale_tile_fp16_keeps_dtype(outputs, reference):
    """Weights in float16: codes, both scales and the shift come back in float16 (the
    authors' contract: work in float32, return in the weights' dtype). Compared with the
    reference at float16's resolution (a float32 reordering may flip the last bit)."""
    out, ref = outputs["dual_scale_tile_fp16"], reference["dual_scale_tile_fp16"]
    for key in ("q", "s1", "s2", "z"):
        assert out[key]["dtype"] == "torch.float16", f"{key} is {out[key]['dtype']}"
    assert_codes_close(out["q"]["value"], ref["q"]["value"], "q")
    assert_codes_close(out["z"]["value"], ref["z"]["value"], "z", share=0.02)
    for key in ("s1", "s2"):
        assert_close(out[key]["value"], ref[key]["value"], rtol=2e-3, what=key)
