"""Checks for Kronos over the cases' outputs.

Independent of the reference: bit codes worked out by hand and from the regenerated
inputs, the BSQ loss of the normalised latent written out in numpy, cross-entropies
from the regenerated logits, the fusion projection and the RMS-normalised residual of
the dependency-aware layer recomputed from the modules' own parameters and
sub-modules, and relations between the outputs of one case (teacher forcing equals
decode_s1 + decode_s2; greedy decoding gives the same mean for one path or three; the
decoded history of a causal tokenizer is the start of the prediction).

Against the reference: every float output within rtol 1e-5 / atol 1e-5 (float32 work
done in another legitimate order, e.g. a sum before or after a product, moves the
last bits); token ids and indices exactly. The autoregressive cases compare decoded
K-lines, which depend on discrete tokens: a reordering can only change a token where
two logits tie to the last bit, which these seeded cases do not come near.
"""

import numpy as np
from _close import assert_tree_close
from _inputs import (
    CODE_BITS,
    D_MODEL,
    S1_BITS,
    dependency_inputs,
    dual_head_inputs,
    embedding_ids,
    quantizer_input,
    random_bits,
    stamps,
)

FLOAT = {"rtol": 1e-5, "atol": 1e-5}
SCALE = 1.0 / np.sqrt(CODE_BITS)


def arr(value):
    return np.asarray(value)


def lsb_first(bits):
    """Index of a bit vector whose first entry is the least significant bit."""
    bits = np.asarray(bits, dtype=np.int64)
    return (bits * (2 ** np.arange(bits.shape[-1]))).sum(-1)


def rms_norm(x, eps=1e-5):
    return x / np.sqrt(np.mean(x * x, axis=-1, keepdims=True) + eps)


def log_softmax(logits):
    shifted = logits - logits.max(-1, keepdims=True)
    return shifted - np.log(np.exp(shifted).sum(-1, keepdims=True))


def cross_entropy(logits, targets):
    logp = log_softmax(logits.astype(np.float64))
    return -np.take_along_axis(logp, targets[..., None], axis=-1).mean()


# ---- tokenizer ---------------------------------------------------------------------------


def test_bits_to_indices_hand(outputs, reference):
    out = outputs["bits_to_indices"]
    # bits + - + + | - - - +, first bit least significant: 1 + 4 + 8 + 128
    np.testing.assert_array_equal(arr(out["hand"]), [[141]])
    np.testing.assert_array_equal(arr(out["hand_coarse"]), [[13]])
    # a zero coordinate counts as a set bit (it quantises to +1): 1 + 8 + 16 + 64
    np.testing.assert_array_equal(arr(out["with_zero"]), [[89]])
    np.testing.assert_array_equal(arr(out["random"]), lsb_first(random_bits()))
    assert_tree_close(out, reference["bits_to_indices"], path="bits_to_indices")


def test_quantizer_codes(outputs, reference):
    out = outputs["quantizer"]
    z = quantizer_input()
    bits = z > 0
    code = np.where(bits, 1.0, -1.0) * SCALE
    for key in ("quantized_half", "quantized_full", "quantized_fast"):
        np.testing.assert_allclose(arr(out[key]), code, rtol=1e-6, atol=1e-7, err_msg=key)
    coarse, fine = lsb_first(bits[..., :S1_BITS]), lsb_first(bits[..., S1_BITS:])
    for key, want in (("coarse", coarse), ("fine", fine), ("coarse_fast", coarse), ("fine_fast", fine)):
        np.testing.assert_array_equal(arr(out[key]), want, err_msg=key)
    # the full index of the same code: the coarse bits are its low bits
    np.testing.assert_array_equal(arr(out["full"]), coarse + 2**S1_BITS * fine)
    assert float(arr(out["loss_fast"])) == 0.0
    assert_tree_close(out, reference["quantizer"], path="quantizer", **FLOAT)


def bsq_loss(z, beta=0.05, gamma0=1.0, gamma=1.1, zeta=0.05):
    """The BSQ loss (commitment + entropy terms) of the latent z projected on the unit
    sphere, as BinarySphericalQuantizer computes it with soft, analytical entropies: the
    per-sample entropy of each bit's soft probability, and the entropy of each bit's
    probability averaged over the batch (the analytical branch reuses the per-bit
    probabilities for the codebook term)."""
    u = z.astype(np.float64) / np.linalg.norm(z, axis=-1, keepdims=True)
    zq = np.where(u > 0, 1.0, -1.0) * SCALE
    commit = beta * np.mean(((zq - u) ** 2).sum(-1))
    p = 1.0 / (1.0 + np.exp(4.0 * u * SCALE))
    prob = np.stack([p, 1.0 - p], axis=-1)
    per_sample = (-(prob * np.log(prob + 1e-8)).sum(-1)).sum(-1).mean()
    avg = prob.reshape(-1, *prob.shape[-2:]).mean(0)
    codebook = (-(avg * np.log(avg + 1e-8)).sum(-1)).sum()
    return commit + zeta * (gamma0 * per_sample - gamma * codebook)


def test_quantizer_loss_is_bsq_of_normalised_latent(outputs):
    out = outputs["quantizer"]
    want = bsq_loss(quantizer_input())
    np.testing.assert_allclose(float(arr(out["loss_half"])), want, rtol=1e-4, atol=1e-6)
    np.testing.assert_allclose(float(arr(out["loss_full"])), want, rtol=1e-4, atol=1e-6)


def test_tokenizer_round_trip(outputs, reference):
    out = outputs["tokenizer_round_trip"]
    quantized = arr(out["quantized"])
    assert quantized.shape == (2, 12, CODE_BITS)
    np.testing.assert_allclose(np.abs(quantized), SCALE, rtol=1e-6)
    # the bits decoded from either kind of index are the quantised code itself
    np.testing.assert_allclose(arr(out["bits_half"]), quantized, rtol=1e-6, atol=1e-7)
    np.testing.assert_allclose(arr(out["bits_full"]), quantized, rtol=1e-6, atol=1e-7)
    bits = quantized > 0
    np.testing.assert_array_equal(arr(out["coarse"]), lsb_first(bits[..., :S1_BITS]))
    np.testing.assert_array_equal(arr(out["fine"]), lsb_first(bits[..., S1_BITS:]))
    np.testing.assert_array_equal(arr(out["full"]), lsb_first(bits))
    np.testing.assert_array_equal(arr(out["z_indices"]), lsb_first(bits))
    # decoding the (coarse, fine) pair gives the tokenizer's full reconstruction
    np.testing.assert_allclose(arr(out["decoded"]), arr(out["z"]), **FLOAT)
    assert_tree_close(out, reference["tokenizer_round_trip"], path="tokenizer_round_trip", **FLOAT)


def test_indices_to_bits_hand(outputs, reference):
    out = outputs["indices_to_bits_hand"]
    # coarse 13 = 1011 (LSB first), fine 8 = 0001; coarse 0 / fine 15; coarse 15 / fine 6 = 0110
    want = np.array(
        [[[1, -1, 1, 1, -1, -1, -1, 1], [-1, -1, -1, -1, 1, 1, 1, 1], [1, 1, 1, 1, -1, 1, 1, -1]]]
    ) * SCALE
    np.testing.assert_allclose(arr(out["half"]), want, rtol=1e-6, atol=1e-7)
    # full indices 141 = coarse 13 + 16 * fine 8, 255 (all set), 0 (none)
    want_full = np.array([[[1, -1, 1, 1, -1, -1, -1, 1], [1] * 8, [-1] * 8]]) * SCALE
    np.testing.assert_allclose(arr(out["full"]), want_full, rtol=1e-6, atol=1e-7)
    assert_tree_close(out, reference["indices_to_bits_hand"], path="indices_to_bits_hand", **FLOAT)


# ---- predictor modules -----------------------------------------------------------------------


def test_hierarchical_embedding_fusion(outputs, reference):
    out = outputs["hierarchical_embedding"]
    s1, s2 = embedding_ids()
    e1, e2 = arr(out["emb_s1"]).astype(np.float64), arr(out["emb_s2"]).astype(np.float64)
    w, b = arr(out["fusion_weight"]).astype(np.float64), arr(out["fusion_bias"]).astype(np.float64)
    # each sub-token embedding scaled by sqrt(d_model), concatenated (coarse first), projected
    both = np.concatenate([e1[s1], e2[s2]], axis=-1) * np.sqrt(D_MODEL)
    want = both @ w.T + b
    for key in ("as_list", "as_tuple", "composite"):
        np.testing.assert_allclose(arr(out[key]), want, rtol=1e-4, atol=1e-5, err_msg=key)
    assert_tree_close(out, reference["hierarchical_embedding"], path="hierarchical_embedding", **FLOAT)


def test_dependency_aware_layer(outputs, reference):
    out = outputs["dependency_aware_layer"]
    hidden, _ = dependency_inputs()
    # the sibling embedding queries the context; the result is added to the context and
    # RMS-normalised (the norm's weight is still ones)
    np.testing.assert_allclose(arr(out["out"]), rms_norm(hidden + arr(out["attn"])), rtol=1e-4, atol=1e-5)
    # one query (the next coarse token) is broadcast over the context positions
    last = arr(out["out_last"])
    assert last.shape == hidden.shape
    np.testing.assert_allclose(last, rms_norm(hidden + arr(out["attn_last"])), rtol=1e-4, atol=1e-5)
    assert_tree_close(out, reference["dependency_aware_layer"], path="dependency_aware_layer", **FLOAT)


def check_losses(losses, s1_logits, s2_logits, s1_targets, s2_targets, valid):
    ce_loss, ce_s1, ce_s2 = (float(arr(v)) for v in losses)
    want_s1 = cross_entropy(s1_logits[valid], s1_targets[valid])
    want_s2 = cross_entropy(s2_logits[valid], s2_targets[valid])
    np.testing.assert_allclose(ce_s1, want_s1, rtol=1e-5)
    np.testing.assert_allclose(ce_s2, want_s2, rtol=1e-5)
    # the two levels weigh the same: their mean (the authors' code) or their sum
    # (the same objective up to the learning rate) are both accepted
    mean, total = (want_s1 + want_s2) / 2, want_s1 + want_s2
    assert np.isclose(ce_loss, mean, rtol=1e-5) or np.isclose(ce_loss, total, rtol=1e-5), (
        f"ce_loss {ce_loss}: neither the mean {mean} nor the sum {total} of the two cross-entropies"
    )


def test_dual_head_loss_closed_form(outputs, reference):
    out = outputs["dual_head_loss"]
    s1_logits, s2_logits, s1_targets, s2_targets, padding = dual_head_inputs()
    everything = np.ones(padding.shape, dtype=bool)
    check_losses(out["no_mask"], s1_logits, s2_logits, s1_targets, s2_targets, everything)
    check_losses(out["mask_none_padded"], s1_logits, s2_logits, s1_targets, s2_targets, everything)
    # padding_mask marks padded positions (non-zero); only the others count
    check_losses(out["mask"], s1_logits, s2_logits, s1_targets, s2_targets, padding == 0)
    for key in ("no_mask", "mask", "mask_none_padded"):
        got, ref = out[key], reference["dual_head_loss"][key]
        assert isinstance(got, list) and len(got) == 3, f"{key}: expected (ce_loss, ce_s1, ce_s2)"
        assert_tree_close(got[1:], ref[1:], path=f"dual_head_loss[{key!r}]", **FLOAT)


def test_teacher_forcing(outputs, reference):
    out = outputs["teacher_forcing"]
    assert arr(out["s1_logits"]).shape == (2, 9, 2**S1_BITS)
    # the coarse logits come from the shared context, the fine ones from the context
    # read by the dependency-aware layer with the given coarse tokens as queries
    np.testing.assert_allclose(arr(out["s1_logits"]), arr(out["s1_direct"]), **FLOAT)
    np.testing.assert_allclose(arr(out["s2_logits"]), arr(out["s2_direct"]), **FLOAT)
    assert_tree_close(out, reference["teacher_forcing"], path="teacher_forcing", **FLOAT)


def test_sampled_coarse_token(outputs, reference):
    out = outputs["sampled_coarse_token"]
    s2 = arr(out["s2_logits"])
    if_5, if_11 = arr(out["if_5"]), arr(out["if_11"])
    assert s2.shape == if_5.shape == (32, 8, 16)
    took_5 = np.isclose(s2, if_5, rtol=1e-4, atol=1e-5).all(-1)
    took_11 = np.isclose(s2, if_11, rtol=1e-4, atol=1e-5).all(-1)
    # every position is conditioned on a coarse token drawn from the s1 distribution:
    # one of its two likely tokens, each about half of the time (256 draws)
    assert np.all(took_5 | took_11), "a position's fine logits follow neither likely coarse token"
    share = took_5.mean()
    assert 0.35 < share < 0.65, f"coarse token 5 drawn at {share:.2f} of the positions, expected about 0.5"
    assert_tree_close(out["s1_logits"], reference["sampled_coarse_token"]["s1_logits"], path="s1_logits", **FLOAT)


# ---- autoregressive inference ----------------------------------------------------------------


def check_trace(run, *, batch, paths, length, pred_len, max_context, stamp_offsets):
    """What the inference handed the predictor and the tokenizer, step by step.

    Paths lie in the batch series by series (series b's paths are rows b * paths ...
    (b + 1) * paths - 1, the layout the averaging reshape reads). Each step feeds the
    predictor the last max_context tokens of history + generated so far, with their
    time stamps, and conditions the fine head on the coarse token it samples; the
    tokenizer finally decodes the last max_context tokens of the whole sequence.
    """
    rows, total = batch * paths, length + pred_len
    history = [np.repeat(arr(h), paths, axis=0) for h in run["history"]]
    assert history[0].shape == (rows, length)
    windows, stamp_windows = run["windows"], run["stamps"]
    assert len(windows) == len(stamp_windows) == pred_len, "one predictor call per generated step"
    assert len(run["coarse_samples"]) == pred_len, "one conditioned fine-head call per step"
    coarse = np.concatenate([arr(c).reshape(rows, 1) for c in run["coarse_samples"]], axis=1)
    decoded = [arr(d) for d in run["decoded"]]
    width = min(total, max_context)
    assert len(decoded) == 2 and decoded[0].shape == decoded[1].shape == (rows, width)
    np.testing.assert_array_equal(decoded[0][:, -pred_len:], coarse, err_msg="decoded coarse tokens")
    full = [
        np.concatenate([history[0], coarse], axis=1),
        np.concatenate([history[1], decoded[1][:, -pred_len:]], axis=1),
    ]
    for level in (0, 1):
        np.testing.assert_array_equal(decoded[level], full[level][:, total - width :], err_msg="decoded window")
    x_offset, y_offset = stamp_offsets
    full_stamp = np.concatenate([stamps(x_offset, batch, length), stamps(y_offset, batch, pred_len)], axis=1)
    full_stamp = np.repeat(full_stamp, paths, axis=0)
    for step, (window, stamp) in enumerate(zip(windows, stamp_windows)):
        end = length + step
        start = max(0, end - max_context)
        for level in (0, 1):
            np.testing.assert_array_equal(arr(window[level]), full[level][:, start:end], err_msg=f"step {step} window")
        np.testing.assert_array_equal(arr(stamp), full_stamp[:, start:end], err_msg=f"step {step} time stamps")


def test_inference_greedy(outputs, reference):
    out = outputs["inference_greedy"]
    three, one = arr(out["three_paths"]["preds"]), arr(out["one_path"]["preds"])
    # 10 history + 5 generated steps read through a window of 12
    assert three.shape == one.shape == (2, 12, 6)
    # greedy paths are all alike: their mean is any one of them
    np.testing.assert_allclose(three, one, **FLOAT)
    shape = dict(batch=2, length=10, pred_len=5, max_context=12, stamp_offsets=(15, 16))
    check_trace(out["three_paths"], paths=3, **shape)
    check_trace(out["one_path"], paths=1, **shape)
    assert_tree_close(out, reference["inference_greedy"], path="inference_greedy", **FLOAT)


def test_inference_history(outputs, reference):
    out = outputs["inference_history"]
    preds = arr(out["run"]["preds"])
    assert preds.shape == (2, 13, 6)
    # the window holds everything: its first 9 positions decode the clipped history
    np.testing.assert_allclose(preds[:, :9], arr(out["decoded_history"]), **FLOAT)
    check_trace(out["run"], batch=2, paths=2, length=9, pred_len=4, max_context=32, stamp_offsets=(18, 19))
    assert_tree_close(out, reference["inference_history"], path="inference_history", **FLOAT)


def test_inference_long_context(outputs, reference):
    out = outputs["inference_long_context"]
    assert arr(out["preds"]).shape == (2, 8, 6)
    check_trace(out, batch=2, paths=2, length=14, pred_len=6, max_context=8, stamp_offsets=(21, 22))
    assert_tree_close(out, reference["inference_long_context"], path="inference_long_context", **FLOAT)


def test_inference_sampled(outputs, reference):
    out = outputs["inference_sampled"]
    assert arr(out["preds"]).shape == (1, 12, 6)
    check_trace(out, batch=1, paths=4, length=10, pred_len=6, max_context=12, stamp_offsets=(24, 25))
    assert_tree_close(out, reference["inference_sampled"], path="inference_sampled", **FLOAT)
