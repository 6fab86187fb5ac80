"""Checks for Expected Attention over the cases' outputs: the query statistics and
their RoPE average against numpy closed forms, properties of the averaged rotation,
the closed-form expected-attention scores (with and without covariance, value norms,
epsilon, grouped heads), the key-value pairs a compression keeps, and a whole prefill
of a two-layer Llama compared with the reference's.

Tolerances: the cases run in float64, but transformers computes RoPE's cos and sin in
float32 (each off by up to 6e-8 from the exact value), so quantities that go through
the rotation agree with the float64 closed forms to about 1e-7 of their scale, and
scores (through exp) to about 1e-6 relative. The checks allow 1e-5 relative, plus an
absolute floor of 1e-6 times the largest entry (entries that nearly cancel); any
order of the arithmetic, and cos/sin computed in float64 instead, pass. Comparisons
with the reference's outputs use the same tolerances.
"""

import numpy as np
from _ea import (
    HEAD_DIM,
    close,
    expected_scores,
    inputs,
    mean_rotation,
    random_statistics,
    rope,
    statistics,
    top_positions,
)

TOL = {"rtol": 1e-5, "atol_rel": 1e-6}

STATS = {  # name: (n_sink, n_future_positions, use_covariance), as in the cases
    "default": (4, 512, True),
    "no_sink_next_position": (0, 1, True),
    "short_horizon": (2, 24, True),
    "mean_only": (3, 40, False),
}
AVG_ROPE = {"one_position": (0, 1), "next_position": (13, 1), "few_positions": (9, 6), "long_horizon": (21, 300)}
SCORES = {  # name: (kv_heads, n_sink, n_future, use_covariance, use_vnorm, epsilon)
    "default": (2, 4, 512, True, True, 0.0),
    "mean_only": (2, 4, 64, False, True, 0.0),
    "no_vnorm": (2, 2, 64, True, False, 0.0),
    "epsilon": (2, 4, 32, True, True, 0.05),
    "no_sink_mha": (4, 0, 16, True, True, 0.0),
    "one_kv_head": (1, 3, 48, True, True, 0.02),
}


# ---- query statistics -----------------------------------------------------------------


def test_query_statistics_closed_form(outputs, reference):
    wq, h, _, _ = inputs(1, 2, 30)
    out = outputs["query_statistics"]
    assert sorted(out) == sorted(STATS)
    for name, (n_sink, n_future, use_cov) in STATS.items():
        mu, cov = statistics(wq, h, n_sink, n_future, use_cov)
        close(out[name]["mu"], mu, **TOL, what=f"{name}: mean")
        close(out[name]["mu"], reference["query_statistics"][name]["mu"], **TOL, what=f"{name}: mean (reference)")
        if use_cov:
            close(out[name]["cov"], cov, **TOL, what=f"{name}: covariance")
            close(out[name]["cov"], reference["query_statistics"][name]["cov"], **TOL, what=f"{name}: covariance (ref)")
        else:
            assert out[name]["cov"] is None, f"{name}: no covariance without use_covariance"


def test_query_covariance_is_symmetric_psd(outputs):
    for name in ("default", "short_horizon"):
        cov = np.asarray(outputs["query_statistics"][name]["cov"])
        close(cov, np.swapaxes(cov, -1, -2), **TOL, what=f"{name}: symmetric")
        assert np.linalg.eigvalsh(cov).min() > -1e-9 * np.abs(cov).max(), f"{name}: not positive semi-definite"


def test_next_position_statistics_are_one_rotation(outputs):
    """With one future position and no sinks, the statistics are those of the queries
    rotated to position q_len (RoPE is a rotation: the norms of the mean and the spectrum
    of the covariance stay)."""
    wq, h, _, _ = inputs(1, 2, 30)
    out = outputs["query_statistics"]["no_sink_next_position"]
    from _ea import prerope_queries

    q = prerope_queries(wq, h)
    mu = q.mean(axis=2)
    close(out["mu"], rope(mu, h.shape[1]), **TOL, what="mean rotated to position q_len")
    c = q - mu[:, :, None, :]
    cov = np.einsum("bnsi,bnsj->bnij", c, c) / q.shape[2]
    close(np.linalg.eigvalsh(np.asarray(out["cov"])), np.linalg.eigvalsh(cov), **TOL, what="spectrum")


# ---- the averaged RoPE ------------------------------------------------------------------


def test_avg_rope_closed_form(outputs, reference):
    mu, cov = random_statistics(3)
    out = outputs["avg_rope"]
    assert sorted(out) == sorted(AVG_ROPE)
    for name, (q_len, n_future) in AVG_ROPE.items():
        r = mean_rotation(q_len, n_future)
        close(out[name]["mu"], mu @ r.T, **TOL, what=f"{name}: mean")
        close(out[name]["cov"], r @ cov @ r.T, **TOL, what=f"{name}: covariance")
        close(out[name]["mu_without_cov"], mu @ r.T, **TOL, what=f"{name}: mean without covariance")
        assert out[name]["cov_none"] is True, f"{name}: covariance None in, None out"
        close(out[name]["mu"], reference["avg_rope"][name]["mu"], **TOL, what=f"{name}: mean (reference)")
        close(out[name]["cov"], reference["avg_rope"][name]["cov"], **TOL, what=f"{name}: covariance (reference)")


def test_avg_rope_position_zero_is_identity(outputs):
    mu, cov = random_statistics(3)
    out = outputs["avg_rope"]["one_position"]
    close(out["mu"], mu, **TOL, what="R_0 = I: mean")
    close(out["cov"], cov, **TOL, what="R_0 = I: covariance")


def test_avg_rope_single_position_is_a_rotation(outputs):
    mu, cov = random_statistics(3)
    out = outputs["avg_rope"]["next_position"]
    close(out["mu"], rope(mu, 13), **TOL, what="mean rotated to position 13")
    close(np.linalg.norm(out["mu"], axis=-1), np.linalg.norm(mu, axis=-1), **TOL, what="norm kept")
    close(np.linalg.eigvalsh(np.asarray(out["cov"])), np.linalg.eigvalsh(cov), **TOL, what="spectrum kept")


def test_avg_rope_averages_rotated_means(outputs):
    """Rbar mu is the mean of the rotated means over the future positions, and, a mean of
    rotations, it never lengthens the mean."""
    mu, _ = random_statistics(3)
    for name, (q_len, n_future) in AVG_ROPE.items():
        direct = np.mean([rope(mu, t) for t in range(q_len, q_len + n_future)], axis=0)
        got = np.asarray(outputs["avg_rope"][name]["mu"])
        close(got, direct, **TOL, what=f"{name}: mean of rotated means")
        assert np.all(np.linalg.norm(got, axis=-1) <= np.linalg.norm(mu, axis=-1) * (1 + 1e-6)), f"{name}: longer mean"


# ---- scores ---------------------------------------------------------------------------


def score_inputs(i, name):
    kv, n_sink, n_future, use_cov, use_vnorm, eps = SCORES[name]
    wq, h, keys, values = inputs(10 + i, 2, 28, kv)
    return (wq, h, keys, values), dict(
        n_sink=n_sink, n_future=n_future, use_covariance=use_cov, use_vnorm=use_vnorm, epsilon=eps
    )


def test_scores_closed_form(outputs, reference):
    out = outputs["scores"]
    assert sorted(out) == sorted(SCORES)
    for i, name in enumerate(SCORES):
        args, kw = score_inputs(i, name)
        kv, n_sink = SCORES[name][0], SCORES[name][1]
        got = np.asarray(out[name])
        assert got.shape == (2, kv, 28), f"{name}: shape {got.shape}"
        close(got[..., n_sink:], expected_scores(*args, **kw), **TOL, what=f"{name}: scores")
        close(got[..., n_sink:], np.asarray(reference["scores"][name])[..., n_sink:], **TOL, what=f"{name} (ref)")


def test_sinks_outrank_every_token(outputs):
    for name, spec in SCORES.items():
        n_sink = spec[1]
        got = np.asarray(outputs["scores"][name])
        if n_sink:
            sinks, rest = got[..., :n_sink], got[..., n_sink:]
            assert np.all(sinks.min(axis=-1) > rest.max(axis=-1)), f"{name}: a sink scores below a token"


def test_scores_without_vnorm_are_distributions(outputs):
    """Without the value norms, each head's scores are an expected attention
    distribution: positive, summing to one over the non-sink keys."""
    got = np.asarray(outputs["scores"]["no_vnorm"])[..., 2:]
    assert np.all(got > 0)
    close(got.sum(axis=-1), np.ones(got.shape[:2]), **TOL, what="sum over keys")


def test_identical_queries_have_no_covariance(outputs):
    out = outputs["identical_queries"]
    cov = np.asarray(out["cov"]["cov"])
    assert np.abs(cov).max() < 1e-10, "queries that never vary have zero covariance"
    assert out["mean"]["cov"] is None
    close(out["cov"]["scores"], out["mean"]["scores"], **TOL, what="covariance term vanishes")
    wq, h, keys, values = inputs(20, 1, 24)
    h[:] = h[:, :1]
    close(np.asarray(out["mean"]["scores"])[..., 4:], expected_scores(wq, h, keys, values, 4, 32), **TOL)


# ---- compression ----------------------------------------------------------------------


def assert_kept(got, scores, n_sink, n_kept, what):
    """The kept positions are the sinks and the n_kept - n_sink best scores; a swap at
    the cut is accepted only between scores equal to 1e-5 relative (a near tie)."""
    got = np.asarray(got)
    want = top_positions(scores, n_sink, n_kept)
    assert got.shape == want.shape, f"{what}: shape {got.shape} != {want.shape}"
    for idx in np.ndindex(got.shape[:2]):
        g, w = set(got[idx].tolist()), set(want[idx].tolist())
        if g == w:
            continue
        s = scores[idx]
        cut = np.sort(s)[::-1][n_kept - n_sink - 1]
        for p in g ^ w:
            assert p >= n_sink and abs(s[p - n_sink] - cut) <= 1e-5 * abs(cut), f"{what} {idx}: kept {sorted(g)}"


def test_compress_keeps_best_expected_attention(outputs):
    for name, ratio, n_sink, offset in (("half", 0.5, 4, 30), ("most", 0.8, 2, 31)):
        wq, h, keys, values = inputs(offset, 2, 40)
        n_kept = int(40 * (1 - ratio))
        out = outputs["compress"][name]
        assert out["shape"] == [2, 2, n_kept, HEAD_DIM]
        scores = expected_scores(wq, h, keys, values, n_sink, 128)
        assert_kept(out["positions"], scores, n_sink, n_kept, f"{name}: keys")
        assert out["value_error"] == 0.0, f"{name}: values pruned apart from their keys"


def test_model_prefill(outputs, reference):
    """The kept positions are the reference's, except that a swap at the cut is accepted
    between two positions whose reference scores agree to 1e-5 relative (a near tie that
    rounding may break either way); the next-token logits are compared with the
    reference's when the kept sets are the same."""
    out, ref = outputs["model_prefill"], reference["model_prefill"]
    assert out["seq_length"] == 24
    same = True
    for layer in range(2):
        keys = np.asarray(out["layers"][layer]["positions"])
        assert keys.shape == (1, 2, 24)
        assert np.all(keys[..., :4] == np.arange(4)), f"layer {layer}: the 4 sinks are kept"
        assert out["layers"][layer]["value_error"] == 0.0, f"layer {layer}: values pruned apart from their keys"
        want = np.asarray(ref["layers"][layer]["positions"])
        scores = np.asarray(ref["scores"][layer])
        for idx in np.ndindex(keys.shape[:2]):
            g, w = set(keys[idx].tolist()), set(want[idx].tolist())
            if g == w:
                continue
            same = False
            s = scores[idx]
            cut = np.sort(s[4:])[::-1][24 - 4 - 1]
            for p in g ^ w:
                assert p >= 4 and abs(s[p] - cut) <= 1e-5 * abs(cut), f"layer {layer} {idx}: kept {sorted(g)}"
    if same:
        close(out["next_logits"], ref["next_logits"], **TOL, what="next-token logits after compression")
