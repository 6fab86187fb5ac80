"""Checks for CE-GPPO (arXiv 2509.20712) over the cases' outputs: hand-worked values, the
paper's objective and its gradient recomputed in numpy from the same seeds (_gppo.py),
the paper's first-order entropy analysis on a tiny categorical policy, and the reference
implementation's outputs. Tolerances are stated in _gppo.py.
"""

import numpy as np

from _gppo import AGG, FRAC, REF_ATOL, REF_RTOL, TOK, arr, assert_matches, close, expected, token_terms
from _gppo_inputs import ENT_BETAS, ENT_CLIP, RANDOM_SETTINGS, entropy_policy, hand_batch, random_batch

HAND = dict(cliprange=0.2, cliprange_low=0.2, cliprange_high=0.28, gppo_loss_beta1=0.5, gppo_loss_beta2=1.0)
# per-token values and gradients of case_hand, worked by hand: clip interval [0.8, 1.28],
# beta1 = 0.5, beta2 = 1, dual-clip bound 3
HAND_VALUES = [[-0.5, -0.7, -0.9, -1.1, -1.28, -1.28],
               [0.4, 0.4, 0.9, 1.1, 1.3, 1.7],
               [0.8, 2.0, 5.0, 6.0, 6.0, 2.5]]
HAND_GRADS = [[-0.5, -0.7, -0.9, -1.1, -1.28, -1.28],
              [0.4, 0.4, 0.9, 1.1, 1.3, 1.7],
              [0.8, 2.0, 5.0, 0.0, 0.0, 2.5]]
HAND_MASK = np.ones((3, 6))
HAND_MASK[2, 5] = 0


def test_hand_per_token(outputs):
    out = outputs["hand"]
    close(out["per_token"], HAND_VALUES, rtol=0, atol=1e-6, what="per-token loss")
    close(out["per_token_grad"], HAND_GRADS, rtol=0, atol=1e-6, what="per-token d loss / d log_prob")


def test_hand_loss_and_gradient(outputs):
    out = outputs["hand"]
    n = HAND_MASK.sum()
    close(out["pg_loss"], (arr(HAND_VALUES) * HAND_MASK).sum() / n, rtol=0, atol=1e-6, what="pg_loss")
    close(out["grad"], arr(HAND_GRADS) * HAND_MASK / n, rtol=0, atol=1e-7, what="d pg_loss / d log_prob")


def test_hand_metrics(outputs):
    out = outputs["hand"]
    n = HAND_MASK.sum()
    close(out["pg_clipfrac"], 5 / n, **FRAC, what="pg_clipfrac: 2 above 1.28 (A > 0), 3 below 0.8 (A < 0)")
    close(out["pg_clipfrac_lower"], 2 / n, **FRAC, what="pg_clipfrac_lower: ratios 3.5 and 4 with A < 0")
    old, new, _, _ = hand_batch()
    close(out["ppo_kl"], ((arr(old) - arr(new)) * HAND_MASK).sum() / n, **AGG, what="ppo_kl")


def test_hand_seq_mean_token_mean(outputs):
    out = outputs["hand_seq_mean"]
    lengths = HAND_MASK.sum(-1)
    rows = (arr(HAND_VALUES) * HAND_MASK).sum(-1) / lengths
    close(out["pg_loss"], rows.mean(), rtol=0, atol=1e-6, what="pg_loss (seq-mean-token-mean)")
    close(out["grad"], arr(HAND_GRADS) * HAND_MASK / (3 * lengths[:, None]), rtol=0, atol=1e-7,
          what="d pg_loss / d log_prob (seq-mean-token-mean)")


def test_random_per_token(outputs):
    name, mode, kwargs = RANDOM_SETTINGS[0]
    assert_matches(outputs["random"][name], expected(random_batch(), mode, kwargs), name, per_token=True)


def test_random_settings(outputs):
    batch = random_batch()
    for name, mode, kwargs in RANDOM_SETTINGS:
        assert_matches(outputs["random"][name], expected(batch, mode, kwargs), f"{name} ({mode})")


def test_random_reference(outputs, reference):
    for name, _, _ in RANDOM_SETTINGS:
        out, ref = outputs["random"][name], reference["random"][name]
        assert set(out) == set(ref), name
        for key in ref:
            close(out[key], ref[key], rtol=REF_RTOL, atol=REF_ATOL, what=f"{name}.{key}")


def test_forward_is_ppo_and_clipped_tokens_keep_gradient(outputs):
    """With beta1 = beta2 = 1 the value is the clipped PPO objective (with verl's dual clip),
    while the tokens outside the clip interval keep a gradient (1 - eps_low) A, (1 + eps_high) A
    instead of PPO's zero."""
    name, mode, kwargs = RANDOM_SETTINGS[4]
    assert kwargs["gppo_loss_beta1"] == kwargs["gppo_loss_beta2"] == 1.0 and mode == "token-mean"
    old, new, A, mask = (arr(x) for x in random_batch())
    r = np.exp(new - old)
    lo, hi = 1 - kwargs["cliprange_low"], 1 + kwargs["cliprange_high"]
    ppo = np.maximum(-A * r, -A * np.clip(r, lo, hi))
    ppo = np.where(A < 0, np.minimum(ppo, -3.0 * A), ppo)
    n = mask.sum()
    out = outputs["random"][name]
    close(out["pg_loss"], (ppo * mask).sum() / n, **AGG, what="pg_loss = PPO's clipped objective")
    clipped = (((r < lo) & (A < 0)) | ((r > hi) & (A > 0))) & (mask > 0)
    assert clipped.any()
    g = arr(out["grad"]) * n
    close(g[clipped], np.where(A < 0, lo * A, hi * A)[clipped] * -1.0, **TOK, what="gradient of clipped tokens")
    assert np.all(np.abs(g[clipped]) > 1e-3)


def entropy_change(logits, grad_logits):
    """First-order change of each position's entropy under a gradient step z -= grad:
    dH = sum_v dH/dz_v * dz_v with dH/dz_v = -pi_v (log pi_v + H)."""
    logp = logits - np.log(np.exp(logits).sum(-1, keepdims=True))
    p = np.exp(logp)
    H = -(p * logp).sum(-1, keepdims=True)
    return (-p * (logp + H) * -arr(grad_logits)).sum(-1)


def test_entropy_gradient_closed_form(outputs):
    logits, tokens, ratio, A = entropy_policy()
    p = np.exp(logits - np.log(np.exp(logits).sum(-1, keepdims=True)))
    onehot = np.eye(logits.shape[1])[tokens]
    for (beta1, beta2), out in zip(ENT_BETAS, outputs["entropy"]):
        kwargs = dict(ENT_CLIP, gppo_loss_beta1=beta1, gppo_loss_beta2=beta2)
        _, g, _, _, _ = token_terms(-np.log(ratio), np.zeros_like(ratio), A, 0.2, 0.28, beta1, beta2)
        assert kwargs["cliprange_low"] == 0.2 and kwargs["cliprange_high"] == 0.28
        close(out["grad_logits"], (g / len(tokens))[:, None] * (onehot - p), rtol=1e-7, atol=1e-12,
              what=f"d loss / d logits, beta = {beta1, beta2}")


def test_entropy_direction(outputs):
    """The paper's entropy analysis: the preserved gradient of negative-advantage
    low-probability tokens below the interval lowers the entropy, in proportion to beta1;
    that of positive-advantage low-probability tokens above it raises the entropy, in
    proportion to beta2; tokens inside the interval do not depend on beta."""
    logits, _, _, _ = entropy_policy()
    dH = {betas: entropy_change(logits, out["grad_logits"]) for betas, out in zip(ENT_BETAS, outputs["entropy"])}
    na_lp, pa_lp, inside = [0, 4], [2, 6], [1, 3, 5, 7]
    base = dH[(0.5, 1.0)]
    assert np.all(base[na_lp] < -1e-6), base[na_lp]
    assert np.all(base[pa_lp] > 1e-6), base[pa_lp]
    close(dH[(1.0, 1.0)][na_lp], 2 * base[na_lp], rtol=1e-7, atol=1e-12, what="NA&LP: linear in beta1")
    close(dH[(1.0, 1.0)][pa_lp], base[pa_lp], rtol=1e-7, atol=1e-12, what="PA&LP: independent of beta1")
    close(dH[(0.5, 0.5)][pa_lp], 0.5 * base[pa_lp], rtol=1e-7, atol=1e-12, what="PA&LP: linear in beta2")
    close(dH[(0.5, 0.5)][na_lp], base[na_lp], rtol=1e-7, atol=1e-12, what="NA&LP: independent of beta2")
    for betas in ENT_BETAS:
        close(dH[betas][inside], base[inside], rtol=1e-7, atol=1e-12, what="inside the interval: independent of beta")
