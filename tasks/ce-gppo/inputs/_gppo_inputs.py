"""Seeded inputs for the ce-gppo cases and checks.

The cases and the checks both import this file (inputs/ is on the path in both
sandboxes): the checks regenerate every input from the same seeds instead of
reading it back from what the cases returned. RCB_SEED (set alike in both
sandboxes; 0 when grading) varies every random input; rcb validate runs several.

Ratios are kept at least 5e-3 away from every clip boundary the settings below use
(1 - 0.2, 1 + 0.2, 1 + 0.28, and the dual-clip bound 3), so that float32 and float64
put every token on the same side of every boundary.
"""

import os

import numpy as np

SEED = int(os.environ.get("RCB_SEED", "0"))

# (name, loss_agg_mode, keyword arguments of compute_gppo_loss_general_beta)
RANDOM_SETTINGS = [
    ("token_mean", "token-mean",
     dict(cliprange=0.2, cliprange_low=0.2, cliprange_high=0.28, gppo_loss_beta1=0.5, gppo_loss_beta2=1.0)),
    ("seq_sum", "seq-mean-token-sum",
     dict(cliprange=0.2, gppo_loss_beta1=0.75, gppo_loss_beta2=1.0)),
    ("seq_mean", "seq-mean-token-mean",
     dict(cliprange=0.2, cliprange_low=0.2, cliprange_high=0.28, gppo_loss_beta1=0.25, gppo_loss_beta2=1.0)),
    ("seq_sum_norm", "seq-mean-token-sum-norm",
     dict(cliprange=0.2, cliprange_low=0.2, cliprange_high=0.28, gppo_loss_beta1=1.0, gppo_loss_beta2=0.5)),
    ("beta_one", "token-mean",
     dict(cliprange=0.2, cliprange_low=0.2, cliprange_high=0.28, gppo_loss_beta1=1.0, gppo_loss_beta2=1.0)),
]
BOUNDARIES = (0.8, 1.2, 1.28, 3.0)
CLIP_RATIO_C = 3.0


def hand_batch():
    """Three responses of six tokens: ratios, advantages and the response mask (the
    last token of the third response is padding)."""
    ratio = np.array([[0.5, 0.7, 0.9, 1.1, 1.3, 1.7],
                      [0.5, 0.7, 0.9, 1.1, 1.3, 1.7],
                      [0.2, 1.0, 2.5, 3.5, 4.0, 1.25]])
    advantages = np.array([[1.0] * 6, [-1.0] * 6, [-2.0] * 6])
    response_mask = np.ones((3, 6))
    response_mask[2, 5] = 0
    log_prob = np.full((3, 6), -1.5)
    old_log_prob = log_prob - np.log(ratio)
    return (old_log_prob.astype(np.float32), log_prob.astype(np.float32),
            advantages.astype(np.float32), response_mask.astype(np.float32))


def random_batch(B=6, T=12):
    """Per-token advantages (one response with all advantages zero), log-ratios mostly
    N(0, 0.5^2) with some above the dual-clip bound, right-padded responses."""
    rng = np.random.default_rng(SEED + 11)
    log_ratio = rng.normal(0.0, 0.5, size=(B, T))
    big = rng.random((B, T)) < 0.15
    log_ratio[big] = rng.uniform(np.log(3.2), np.log(5.0), size=big.sum())
    for _ in range(100):
        r = np.exp(log_ratio)
        near = np.zeros_like(r, dtype=bool)
        for b in BOUNDARIES:
            near |= np.abs(r - b) < 5e-3
        if not near.any():
            break
        log_ratio[near] = rng.normal(0.0, 0.5, size=near.sum())
    advantages = rng.normal(0.0, 1.0, size=(B, T))
    advantages[rng.integers(1, B)] = 0.0
    # two tokens of the first (full-length) response past the dual-clip bound with A < 0
    log_ratio[0, :2] = np.log([3.6, 4.2])
    advantages[0, :2] = -np.abs(advantages[0, :2]) - 0.1
    lengths = rng.integers(T // 2, T + 1, size=B)
    lengths[0] = T
    response_mask = (np.arange(T)[None, :] < lengths[:, None]).astype(float)
    log_prob = rng.uniform(-4.0, -0.05, size=(B, T))
    old_log_prob = log_prob - log_ratio
    return (old_log_prob.astype(np.float32), log_prob.astype(np.float32),
            advantages.astype(np.float32), response_mask.astype(np.float32))


# the entropy case: one response of T tokens, each from its own categorical over V
ENT_T, ENT_V = 8, 6
ENT_BETAS = [(0.5, 1.0), (1.0, 1.0), (0.5, 0.5)]
ENT_CLIP = dict(cliprange=0.2, cliprange_low=0.2, cliprange_high=0.28)


def entropy_policy():
    """Logits (T, V), the sampled tokens, the old-policy ratios and the advantages.
    Even positions sample their least likely token (low probability), odd ones their
    most likely. Positions 0, 4: negative advantage, ratio 0.5 (NA&LP, below 1 - eps);
    2, 6: positive advantage, ratio 1.6 (PA&LP, above 1 + eps); odd positions: ratio
    1.05, advantages of either sign (inside the interval)."""
    rng = np.random.default_rng(SEED + 23)
    logits = rng.normal(0.0, 1.5, size=(ENT_T, ENT_V))
    tokens = np.where(np.arange(ENT_T) % 2 == 0, logits.argmin(-1), logits.argmax(-1))
    ratio = np.array([0.5, 1.05, 1.6, 1.05, 0.5, 1.05, 1.6, 1.05])
    advantages = np.array([-1.0, 0.7, 1.0, -0.4, -0.8, -1.1, 1.3, 0.5]) * rng.uniform(0.5, 1.5, size=ENT_T)
    return logits, tokens, ratio, advantages
