"""Checks for H-Net's dynamic chunking (arXiv 2507.07955). They run without the code
under test: they rebuild the seeded inputs (inputs/_hnet_inputs.py), recompute the
routing probabilities, the chunk selection, the EMA smoothing and upsampling, the
straight-through estimator and the ratio loss in float64 numpy (checks/_hnet.py), check
properties the paper states, and compare with the reference code's outputs.

Tolerances. The code runs in float32. Probabilities (a cosine of normalised vectors)
are compared at atol 1e-5: a float32 evaluation in any order is within a few ulps.
Boundary decisions are compared exactly: the inputs keep every probability at least
1e-3 away from the 0.5 threshold. Chunk selection is a gather: exact. The smoothed
states are compared at rtol 1e-4, atol 2e-5: the authors' route through the SSD scan
(x / dt, then dt * x with dt = -log(1 - p)) and a direct recurrence differ by float32
rounding only (about 1e-6 here), while leaving out the restart of the recurrence at a
packed sequence's start, the zero initial state or the clamp of P to [1e-4, 1 - 1e-4]
moves values by 1e-4 or much more. Gradients of the whole layer go through 1 / dt and
the cosine's normalisation, so they are compared at rtol 1e-3, atol 1e-4.
"""

import numpy as np
import pytest

from _hnet import arr, expected_chunks, expected_dechunk, expected_ratio_loss, expected_routing
from _hnet_inputs import (
    RATIO_N, chunk_inputs, dechunk_inputs, pipeline_inputs, ratio_inputs, routing_inputs,
    ste_inputs,
)


# ---------------------------------------------------------------- routing module

def check_routing(out, p_exp, b_exp, valid):
    prob = arr(out["boundary_prob"])
    assert prob.shape == p_exp.shape + (2,)
    np.testing.assert_allclose(prob[..., 1][valid], p_exp[valid], atol=1e-5)
    np.testing.assert_allclose(prob[..., 0][valid], 1 - p_exp[valid], atol=1e-5)
    bmask = arr(out["boundary_mask"]).astype(bool)
    assert bmask.shape == b_exp.shape
    np.testing.assert_array_equal(bmask, b_exp & valid)
    sel = arr(out["selected_probs"])
    assert sel.shape == p_exp.shape + (1,)
    np.testing.assert_allclose(sel[..., 0][valid], np.maximum(p_exp, 1 - p_exp)[valid], atol=1e-5)


def test_routing_padded(outputs):
    r = routing_inputs()
    p, b = expected_routing(r["padded"], r["wq"], r["wk"])
    check_routing(outputs["routing"]["padded"], p, b, r["mask"])


def test_routing_packed(outputs):
    """Packed sequences: the first token of every sequence is a boundary of probability 1,
    and no pair across two sequences is compared."""
    r = routing_inputs()
    p, b = expected_routing(r["packed"], r["wq"], r["wk"], starts=r["cu_seqlens"][:-1])
    check_routing(outputs["routing"]["packed"], p, b, np.ones(p.shape, dtype=bool))


def test_routing_identity_init(outputs):
    """The router's projections start as identities: the cosine of raw adjacent states."""
    r = routing_inputs()
    eye = np.eye(r["wq"].shape[0])
    p, b = expected_routing(r["padded"], eye, eye)
    valid = r["mask"] & (np.abs(p - 0.5) > 1e-4)
    out = outputs["routing"]["identity_init"]
    np.testing.assert_allclose(arr(out["boundary_prob"])[..., 1][r["mask"]], p[r["mask"]], atol=1e-5)
    np.testing.assert_array_equal(arr(out["boundary_mask"]).astype(bool)[valid], b[valid])


def test_first_token_is_a_boundary(outputs):
    for name in ("padded", "packed", "identity_init"):
        out = outputs["routing"][name]
        prob, bmask = arr(out["boundary_prob"]), arr(out["boundary_mask"]).astype(bool)
        starts = routing_inputs()["cu_seqlens"][:-1] if name == "packed" else [0]
        assert bmask[..., starts].all(), name
        np.testing.assert_allclose(prob[..., starts, 1], 1.0, atol=1e-6)


def test_routing_matches_reference(outputs, reference):
    r = routing_inputs()
    for name in ("padded", "packed"):
        out, ref = outputs["routing"][name], reference["routing"][name]
        valid = r["mask"] if name == "padded" else np.ones(arr(ref["boundary_mask"]).shape, bool)
        np.testing.assert_array_equal(arr(out["boundary_mask"]), arr(ref["boundary_mask"]))
        for key in ("boundary_prob", "selected_probs"):
            np.testing.assert_allclose(arr(out[key])[valid], arr(ref[key])[valid], atol=1e-5)


# ---------------------------------------------------------------- chunk layer

def test_chunk_padded(outputs):
    """Each row keeps the states at its boundaries, in order, left-aligned; the new mask
    marks as many chunks as the row has boundaries (padded to the longest row)."""
    c = chunk_inputs()
    out = outputs["chunk"]["padded"]
    h, mask = arr(out["hidden"]), arr(out["mask"]).astype(bool)
    counts = c["boundary_mask"].sum(-1)
    assert h.shape == (len(counts), counts.max(), c["hidden"].shape[-1])
    np.testing.assert_array_equal(mask, np.arange(counts.max())[None, :] < counts[:, None])
    np.testing.assert_array_equal(mask.sum(-1), counts)
    for row, want in enumerate(expected_chunks(c["hidden"], c["boundary_mask"])):
        np.testing.assert_array_equal(h[row, : len(want)], want)
    assert out["cu_seqlens"] is None


def test_chunk_packed(outputs):
    """Packed: the boundary states in order, and cu_seqlens counting each sequence's
    boundaries; max_seqlen is the largest count."""
    c = chunk_inputs()
    out = outputs["chunk"]["packed"]
    bm = c["packed_boundary_mask"]
    np.testing.assert_array_equal(arr(out["hidden"]), c["packed"][bm])
    cu = c["cu_seqlens"]
    counts = [int(bm[a:b].sum()) for a, b in zip(cu[:-1], cu[1:])]
    np.testing.assert_array_equal(arr(out["cu_seqlens"]), np.concatenate([[0], np.cumsum(counts)]))
    assert int(out["max_seqlen"]) == max(counts)
    assert out["mask"] is None


def test_chunk_matches_reference(outputs, reference):
    out, ref = outputs["chunk"]["padded"], reference["chunk"]["padded"]
    mask = arr(ref["mask"]).astype(bool)
    np.testing.assert_array_equal(arr(out["mask"]), mask)
    np.testing.assert_array_equal(arr(out["hidden"])[mask], arr(ref["hidden"])[mask])
    out, ref = outputs["chunk"]["packed"], reference["chunk"]["packed"]
    for key in ("hidden", "cu_seqlens"):
        np.testing.assert_array_equal(arr(out[key]), arr(ref[key]))


# ---------------------------------------------------------------- dechunk layer

@pytest.mark.parametrize("name", ["padded", "one_head"])
def test_dechunk_padded(outputs, name):
    d = dechunk_inputs()
    out = arr(outputs["dechunk"][name])
    assert out.shape == d["boundary_mask"].shape + (d["chunks"].shape[-1],)
    for row in range(out.shape[0]):
        want = expected_dechunk(d["chunks"][row], d["boundary_mask"][row], d["prob"][row])
        valid = d["mask"][row]
        np.testing.assert_allclose(out[row][valid], want[valid], rtol=1e-4, atol=2e-5)


def test_dechunk_packed(outputs):
    """Packed sequences are smoothed independently: the EMA restarts at each one."""
    d = dechunk_inputs()
    out = arr(outputs["dechunk"]["packed"])
    want = expected_dechunk(
        d["packed_chunks"], d["packed_boundary_mask"], d["packed_prob"],
        seq_starts=list(d["cu_seqlens"][:-1]),
    )
    assert out.shape == want.shape
    np.testing.assert_allclose(out, want, rtol=1e-4, atol=2e-5)


def test_dechunk_constant_between_boundaries(outputs):
    """Every token between two boundaries carries the same state (upsampling repeats the
    chunk's smoothed state)."""
    d = dechunk_inputs()
    out = arr(outputs["dechunk"]["padded"])
    for row in range(out.shape[0]):
        for pos in range(1, out.shape[1]):
            if d["mask"][row, pos] and not d["boundary_mask"][row, pos]:
                np.testing.assert_array_equal(out[row, pos], out[row, pos - 1])


def test_dechunk_matches_reference(outputs, reference):
    d = dechunk_inputs()
    for name in ("padded", "one_head"):
        np.testing.assert_allclose(
            arr(outputs["dechunk"][name])[d["mask"]], arr(reference["dechunk"][name])[d["mask"]],
            rtol=1e-4, atol=2e-5,
        )
    np.testing.assert_allclose(
        arr(outputs["dechunk"]["packed"]), arr(reference["dechunk"]["packed"]), rtol=1e-4, atol=2e-5
    )


def test_chunk_then_dechunk_all_boundaries_is_identity(outputs):
    """Every valid token a boundary of probability 1: dechunk(chunk(x)) = x, up to the
    clamp of P at 1 - 1e-4 (a 1e-4 share of the previous state leaks in)."""
    c = chunk_inputs(8)
    out = arr(outputs["chunk_dechunk"]["all_boundaries"])
    valid = c["mask"]
    np.testing.assert_allclose(out[valid], c["hidden"][valid], rtol=0, atol=1e-3)
    np.testing.assert_allclose(out[valid], c["hidden"][valid] * (1 - 1e-4), rtol=0, atol=5e-4)


def test_chunk_then_dechunk_hard_boundaries(outputs):
    """Boundaries of probability 1: each token gets the state at the last boundary at or
    before it (piecewise constant upsampling)."""
    c = chunk_inputs(8)
    out = arr(outputs["chunk_dechunk"]["hard"])
    bm = c["boundary_mask"].copy()
    bm[:, 0] = True
    for row in range(out.shape[0]):
        last = np.maximum.accumulate(np.where(bm[row], np.arange(bm.shape[1]), 0))
        want = c["hidden"][row][last]
        valid = c["mask"][row]
        np.testing.assert_allclose(out[row][valid], want[valid], rtol=0, atol=1e-3)
        want = expected_dechunk(c["hidden"][row][bm[row]], bm[row], np.ones(bm.shape[1]))
        np.testing.assert_allclose(out[row][valid], want[valid], rtol=1e-4, atol=2e-5)


# ---------------------------------------------------------------- straight-through estimator

def test_ste(outputs):
    """STE(c) is 1 in the forward pass and passes the gradient through unchanged: the
    output equals the dechunked states, and d/dc of sum(w * out * STE(c)) is sum_d w * out."""
    s = ste_inputs()
    out = outputs["ste"]
    np.testing.assert_allclose(arr(out["y"]), s["out"], rtol=1e-6, atol=1e-7)
    np.testing.assert_allclose(arr(out["grad_out"]), s["w"], rtol=1e-6, atol=1e-7)
    want = (s["w"].astype(np.float64) * s["out"]).sum(-1, keepdims=True)
    np.testing.assert_allclose(arr(out["grad_p"]), want, rtol=1e-5, atol=1e-5)


# ---------------------------------------------------------------- ratio loss

def dloss_dp(grad):
    """The gradient with respect to p of a loss given the boundary_prob = (1 - p, p)
    columns' gradients (an implementation may read either column)."""
    g = arr(grad)
    return g[..., 1] - g[..., 0]


@pytest.mark.parametrize("N", RATIO_N)
def test_ratio_loss_closed_form(outputs, N):
    r = ratio_inputs()
    out = outputs["ratio_loss"][f"random_N{N:g}"]
    loss, grad = expected_ratio_loss(r["p"], r["mask"], N)
    np.testing.assert_allclose(float(arr(out["loss"])), loss, rtol=1e-5)
    np.testing.assert_allclose(dloss_dp(out["grad"]), grad, rtol=1e-4, atol=1e-7)


def test_ratio_loss_is_one_at_target_ratio(outputs):
    """With F = G = 1/N the ratio loss takes its minimum value 1 (N = 3 here)."""
    out = outputs["ratio_loss"]["balanced_N3"]
    np.testing.assert_allclose(float(arr(out["loss"])), 1.0, rtol=1e-5)


def test_ratio_loss_matches_reference(outputs, reference):
    for name, ref in reference["ratio_loss"].items():
        out = outputs["ratio_loss"][name]
        np.testing.assert_allclose(float(arr(out["loss"])), float(arr(ref["loss"])), rtol=1e-5)
        np.testing.assert_allclose(dloss_dp(out["grad"]), dloss_dp(ref["grad"]), rtol=1e-4, atol=1e-7)


# ---------------------------------------------------------------- one layer end to end

def test_pipeline_chunk_count_equals_boundary_count(outputs):
    r = pipeline_inputs()
    out = outputs["pipeline"]
    bm = arr(out["boundary_mask"]).astype(bool)
    _, b = expected_routing(r["padded"], r["wq"], r["wk"])
    np.testing.assert_array_equal(bm, b & r["mask"])
    np.testing.assert_array_equal(arr(out["next_mask"]).sum(-1), bm.sum(-1))


def test_pipeline_forward(outputs):
    """y = dechunk(f(chunk(x))) + x / 2, recomputed from the paper's equations."""
    r = pipeline_inputs()
    p, b = expected_routing(r["padded"], r["wq"], r["wk"])
    b &= r["mask"]
    y = arr(outputs["pipeline"]["y"])
    for row in range(y.shape[0]):
        chunks = np.tanh(r["padded"][row][b[row]].astype(np.float64) @ r["w_main"])
        want = expected_dechunk(chunks, b[row], p[row]) + 0.5 * r["padded"][row]
        valid = r["mask"][row]
        np.testing.assert_allclose(y[row][valid], want[valid], rtol=1e-4, atol=2e-5)


def test_pipeline_matches_reference(outputs, reference):
    """The forward pass and the gradient with respect to the layer's input (through the
    router's probabilities, the smoothing and the straight-through confidence)."""
    r = pipeline_inputs()
    out, ref = outputs["pipeline"], reference["pipeline"]
    valid = r["mask"]
    np.testing.assert_allclose(arr(out["y"])[valid], arr(ref["y"])[valid], rtol=1e-4, atol=2e-5)
    np.testing.assert_allclose(arr(out["grad"]), arr(ref["grad"]), rtol=1e-3, atol=1e-4)
