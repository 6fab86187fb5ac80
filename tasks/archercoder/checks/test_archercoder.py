"""Checks for Archer's dual-token constraints over the cases' outputs: hand-worked values,
the paper's rules recomputed in numpy from the same seeds (the token split at the 80th
entropy percentile of each response, a clip range per token group, a KL term per token
group with its own weight), finite-difference gradients of that objective, and the
reference implementation's outputs. Tolerances are stated in _archer.py.
"""

import math

import numpy as np

from _archer import (
    REF_ATOL,
    REF_RTOL,
    arr,
    assert_gradient,
    close,
    dual_token_terms,
    numerical_gradient,
    policy_token_losses,
)
from _archer_inputs import HAND_HIGH, HAND_LENGTHS, LP, LR, SEED, hand_batch, random_batch, random_policy_inputs

# the settings of cases_archercoder.dual_token_config()
RANGES_LOW = (0.15, 0.25)  # low-entropy tokens: clip to [0.85, 1.25]
RANGES_HIGH = (0.4, 0.6)  # high-entropy tokens: clip to [0.6, 1.6]
KL_COEF, HIGH_KL_COEF = 0.05, 0.3
F32 = dict(rtol=1e-4, atol=2e-6)


def compare_with_reference(out, ref, what):
    if isinstance(ref, dict):
        assert isinstance(out, dict) and set(out) == set(ref), f"{what}: keys {sorted(out) if isinstance(out, dict) else out} != {sorted(ref)}"
        for key in ref:
            compare_with_reference(out[key], ref[key], f"{what}.{key}")
    elif isinstance(ref, list) and ref and (isinstance(ref[0], (dict, list)) or ref[0] is None):
        assert isinstance(out, list) and len(out) == len(ref), f"{what}: length"
        for i, (o, r) in enumerate(zip(out, ref)):
            compare_with_reference(o, r, f"{what}[{i}]")
    elif ref is None:
        assert out is None, f"{what}: expected None"
    else:
        a, r = arr(out), arr(ref)
        assert a.shape == r.shape, f"{what}: shape {a.shape} != {r.shape}"
        np.testing.assert_allclose(a, r, rtol=REF_RTOL, atol=REF_ATOL, equal_nan=True, err_msg=what)


def compare_dual_with_reference(out, ref, what):
    """Masks, gradients and metrics; not the logged "actor/kl_loss" of the dual-token
    branch (the authors log the sum of the two group terms; the paper defines no such
    quantity, and any value there leaves the update unchanged)."""
    strip = lambda m: {k: v for k, v in m.items() if k != "actor/kl_loss"}  # noqa: E731
    assert "actor/kl_loss" in out["metrics"]
    compare_with_reference(strip(out["metrics"]), strip(ref["metrics"]), f"{what}.metrics")
    compare_with_reference(out["grads"], ref["grads"], f"{what}.grads")
    compare_with_reference(out["masks"], ref["masks"], f"{what}.masks")


def metric(out, key):
    value = out["metrics"][key]
    return value[0] if isinstance(value, list) else value


# ---- the clip range of a token depends on its entropy group ------------------------------------------


def test_clip_hand(outputs, reference):
    out = outputs["clip_hand"]
    # ratios 0.5 0.7 0.9 1.1 1.3 1.7; tokens 0, 2, 4 low-entropy (range [0.8, 1.2]),
    # tokens 1, 3, 5 high-entropy (range [0.5, 1.5]).
    # A = +1: loss = -min(r, clip(r)): 1.3 on a low-entropy token is cut to 1.2, 1.7 on a high one to 1.5
    # A = -1: loss = max(r, clip(r)): 0.5 on a low-entropy token is raised to 0.8; 0.7 on a high one stays
    expected = [[-0.5, -0.7, -0.9, -1.1, -1.2, -1.5], [0.8, 0.7, 0.9, 1.1, 1.3, 1.7]]
    close(out["per_token"], expected, rtol=0, atol=1e-6, what="per-token losses")
    close(out["pg_loss"], 0.6 / 12, rtol=0, atol=1e-6, what="pg_loss")  # (-5.9 + 6.5) / 12
    close(out["pg_clipfrac"], 3 / 12, rtol=0, atol=1e-6, what="pg_clipfrac")  # the 1.3, 1.7 and 0.5 above
    compare_with_reference(out, reference["clip_hand"], "clip_hand")


def test_clip_random(outputs, reference):
    inputs = random_policy_inputs(SEED + 11)
    mask = inputs["response_mask"]
    losses, clipped = policy_token_losses(inputs["log_prob"], inputs["old_log_prob"], inputs["advantages"],
                                          inputs["low_entropy"].astype(bool), RANGES_LOW, RANGES_HIGH)
    out = outputs["clip_random"]
    close(out["per_token"], np.where(mask, losses, np.nan), **F32, what="per-token losses")
    close(out["pg_loss"], (losses * mask).sum() / mask.sum(), **F32, what="pg_loss")
    per_seq = (losses * mask).sum(1) / mask.sum(1)
    close(out["pg_loss_seq_mean"], per_seq.mean(), **F32, what="seq-mean-token-mean")
    close(out["pg_clipfrac"], (clipped * mask).sum() / mask.sum(), **F32, what="pg_clipfrac")
    compare_with_reference(out, reference["clip_random"], "clip_random")


def test_clip_random_standard(outputs, reference):
    inputs = random_policy_inputs(SEED + 11)
    mask = inputs["response_mask"]
    losses, clipped = policy_token_losses(inputs["log_prob"], inputs["old_log_prob"], inputs["advantages"],
                                          np.ones(mask.shape, dtype=bool), (0.2, 0.28), (0.2, 0.28))
    out = outputs["clip_random_standard"]
    close(out["per_token"], np.where(mask, losses, np.nan), **F32, what="per-token losses")
    close(out["pg_clipfrac"], (clipped * mask).sum() / mask.sum(), **F32, what="pg_clipfrac")
    compare_with_reference(out, reference["clip_random_standard"], "clip_random_standard")


# ---- the whole update: token split, clip and KL per token group ----------------------------------------


def test_update_hand_split(outputs, reference):
    out = outputs["update_hand"]
    assert len(out["masks"]) == 1 and out["masks"][0] is not None, "one micro-batch, with a token mask"
    # response tokens right after a 0 token are the high-entropy ones (ln 8, the rest are
    # peaked); the mask handed to compute_policy_loss is True on the valid low-entropy tokens
    expected = np.zeros((3, LR), dtype=bool)
    for b, (n, high) in enumerate(zip(HAND_LENGTHS, HAND_HIGH)):
        expected[b, :n] = True
        expected[b, high] = False
    np.testing.assert_array_equal(np.asarray(out["masks"][0], dtype=bool), expected)


def test_update_hand_losses(outputs, reference):
    out = outputs["update_hand"]
    # clip 0.2 on low-entropy tokens, 0.5 on high ones; ratio 1.4 (A = +1) on responses 0 and 2,
    # 0.6 (A = -1) on response 1. Response 0: 8 x -1.2 + 2 x -1.4; response 1: 4 x 0.8 + 1 x 0.6;
    # response 2: 12 x -1.2 + 3 x -1.4; over 30 tokens. Clipped: the 24 low-entropy tokens.
    close(metric(out, "actor/pg_loss"), (-12.4 + 3.8 - 18.6) / 30, rtol=0, atol=2e-6, what="pg_loss")
    close(metric(out, "actor/pg_clipfrac"), 24 / 30, rtol=0, atol=2e-6, what="pg_clipfrac")
    # log pi_ref - log pi = +ln 2 on low-entropy tokens: k3 = 2 - ln 2 - 1; -ln 2 on high ones: 1/2 + ln 2 - 1
    close(metric(out, "actor/low_entropy_kl_loss"), 1 - math.log(2), rtol=0, atol=2e-6, what="low-entropy KL")
    close(metric(out, "actor/high_entropy_kl_loss"), math.log(2) - 0.5, rtol=0, atol=2e-6, what="high-entropy KL")
    compare_dual_with_reference(out, reference["update_hand"], "update_hand")


def test_update_random_split(outputs, reference):
    inputs = random_batch(SEED + 21)
    terms = dual_token_terms(inputs, arr(inputs["W"]), arr(inputs["P"]), True, RANGES_LOW, RANGES_HIGH, KL_COEF, HIGH_KL_COEF)
    out = outputs["update_random"]
    assert len(out["masks"]) == 1 and out["masks"][0] is not None
    np.testing.assert_array_equal(np.asarray(out["masks"][0], dtype=bool), terms["low"])
    compare_with_reference(out["masks"], reference["update_random"]["masks"], "masks")


def test_update_random_losses(outputs, reference):
    inputs = random_batch(SEED + 21)
    terms = dual_token_terms(inputs, arr(inputs["W"]), arr(inputs["P"]), True, RANGES_LOW, RANGES_HIGH, KL_COEF, HIGH_KL_COEF)
    out = outputs["update_random"]
    for key in ("pg_loss", "pg_clipfrac", "ppo_kl", "low_entropy_kl_loss", "high_entropy_kl_loss"):
        close(metric(out, "actor/" + key), terms[key], **F32, what=key)
    compare_dual_with_reference(out, reference["update_random"], "update_random")


def test_update_random_gradient(outputs, reference):
    """The gradient back-propagated is that of pg_loss + 0.05 x KL(low-entropy tokens)
    + 0.3 x KL(high-entropy tokens)."""
    inputs = random_batch(SEED + 21)
    expected = numerical_gradient(inputs, True, RANGES_LOW, RANGES_HIGH, KL_COEF, HIGH_KL_COEF)
    out = outputs["update_random"]
    assert len(out["grads"]) == 1
    for name in ("W", "P"):
        assert_gradient(out["grads"][0][name], expected[name], name)
    compare_with_reference(out["grads"], reference["update_random"]["grads"], "grads")


def test_update_micro_batches(outputs, reference):
    inputs = random_batch(SEED + 31)
    terms = dual_token_terms(inputs, arr(inputs["W"]), arr(inputs["P"]), True, RANGES_LOW, RANGES_HIGH, KL_COEF, HIGH_KL_COEF)
    out = outputs["update_micro_batches"]
    assert len(out["masks"]) == 8 and len(out["grads"]) == 4
    # the first mini-batch's two micro-batches (responses 0 and 1) run before any step
    for b in (0, 1):
        np.testing.assert_array_equal(np.asarray(out["masks"][b], dtype=bool)[0], terms["low"][b], err_msg=f"response {b}")
    compare_dual_with_reference(out, reference["update_micro_batches"], "update_micro_batches")


def test_update_standard(outputs, reference):
    """Without the token split: one clip range [0.8, 1.2] and one KL term over all tokens."""
    inputs = random_batch(SEED + 21)
    terms = dual_token_terms(inputs, arr(inputs["W"]), arr(inputs["P"]), False, (0.2, 0.2), None, KL_COEF, None)
    out = outputs["update_standard"]
    for key in ("pg_loss", "pg_clipfrac", "kl_loss"):
        close(metric(out, "actor/" + key), terms[key], **F32, what=key)
    assert "actor/low_entropy_kl_loss" not in out["metrics"]
    expected = numerical_gradient(inputs, False, (0.2, 0.2), None, KL_COEF, None)
    for name in ("W", "P"):
        assert_gradient(out["grads"][0][name], expected[name], name)
    # (the token masks are not compared: without the split nothing reads them)
    compare_with_reference(out["metrics"], reference["update_standard"]["metrics"], "metrics")
    compare_with_reference(out["grads"], reference["update_standard"]["grads"], "grads")
