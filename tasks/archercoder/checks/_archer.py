"""Helpers the archercoder checks share: the paper's rules written out in numpy (float64),
independently of the task's code, and comparisons with stated tolerances.

Tolerances. The task's code runs in float32. Against the reference's own outputs (the
same float32 computation, perhaps summed in another order): rtol 1e-4, atol 1e-6.
Against the float64 recomputation here: rtol 1e-4, atol 2e-6 on losses and metrics;
gradients against central finite differences of the float64 objective: atol 1e-4 of the
largest gradient entry plus 1e-6 (float32 back-propagation against a float64 difference
quotient with h = 1e-6).
"""

import numpy as np

from _archer_inputs import LP, forward

REF_RTOL, REF_ATOL = 1e-4, 1e-6


def arr(x):
    return np.asarray(x, dtype=float)


def close(actual, desired, rtol=REF_RTOL, atol=REF_ATOL, what="value"):
    assert actual is not None, f"{what}: got None"
    np.testing.assert_allclose(arr(actual), arr(desired), rtol=rtol, atol=atol, err_msg=what)


def masked_mean(x, mask):
    mask = arr(mask)
    return float((arr(x) * mask).sum() / mask.sum())


def entropy_split(entropy, response_mask, high_share=0.2):
    """The paper's token split: in each response, the top 20% of its valid tokens by entropy
    (above the 80th percentile) are the high-entropy ones. Response lengths are multiples of
    5, so this is the same set as "above the linear 80th percentile"."""
    low = np.zeros(entropy.shape, dtype=bool)
    high = np.zeros(entropy.shape, dtype=bool)
    for b in range(entropy.shape[0]):
        valid = np.flatnonzero(response_mask[b])
        k = int(round(high_share * len(valid)))
        order = valid[np.argsort(entropy[b, valid])]
        high[b, order[len(order) - k :]] = True
        low[b, order[: len(order) - k]] = True
        gap = entropy[b, order[len(order) - k]] - entropy[b, order[len(order) - k - 1]]
        assert gap > 1e-5, "entropies too close to the split: change the seed's inputs"
    return low, high


def policy_token_losses(log_prob, old_log_prob, advantages, low_entropy, ranges_low, ranges_high, clip_ratio_c=3.0):
    """Per-token PPO loss with a clip range per token group and verl's dual clip for A < 0.
    ranges_low = (eps_low, eps_high) for low-entropy tokens, ranges_high for high-entropy ones."""
    ratio = np.exp(np.clip(arr(log_prob) - arr(old_log_prob), -20.0, 20.0))
    A = arr(advantages)
    lo = np.where(low_entropy, ranges_low[0], ranges_high[0])
    hi = np.where(low_entropy, ranges_low[1], ranges_high[1])
    pg1 = -A * ratio
    pg2 = -A * np.clip(ratio, 1.0 - lo, 1.0 + hi)
    loss = np.maximum(pg1, pg2)
    loss = np.where(A < 0, np.minimum(loss, -A * clip_ratio_c), loss)
    return loss, pg2 > pg1


def low_var_kl(log_prob, ref_log_prob):
    kl = np.clip(arr(ref_log_prob) - arr(log_prob), -20.0, 20.0)
    return np.clip(np.exp(kl) - kl - 1.0, -10.0, 10.0)


def dual_token_terms(inputs, W, P, dual, ranges_low, ranges_high, kl_coef, high_kl_coef):
    """Everything update_policy computes on one micro-batch, in float64: the token split,
    pg_loss, its clip fraction, the KL terms and the total loss that is back-propagated."""
    logp, entropy = forward(W, P, inputs["input_ids"])
    response_mask = inputs["attention_mask"][:, LP:]
    if dual:
        low, high = entropy_split(entropy, response_mask)
    else:
        low, high = response_mask.astype(bool), np.zeros(response_mask.shape, dtype=bool)
        ranges_high = ranges_low
    losses, clipped = policy_token_losses(logp, inputs["old_log_probs"], inputs["advantages"], low, ranges_low, ranges_high)
    kld = low_var_kl(logp, inputs["ref_log_prob"])
    out = {
        "low": low,
        "high": high,
        "pg_loss": masked_mean(losses, response_mask),
        "pg_clipfrac": masked_mean(clipped, response_mask),
        "ppo_kl": masked_mean(arr(inputs["old_log_probs"]) - logp, response_mask),
    }
    if dual:
        out["low_entropy_kl_loss"] = masked_mean(kld, low)
        out["high_entropy_kl_loss"] = masked_mean(kld, high) if high.any() else 0.0
        out["kl_loss"] = out["low_entropy_kl_loss"] + out["high_entropy_kl_loss"]
        out["total"] = out["pg_loss"] + kl_coef * out["low_entropy_kl_loss"] + high_kl_coef * out["high_entropy_kl_loss"]
    else:
        out["kl_loss"] = masked_mean(kld, response_mask)
        out["total"] = out["pg_loss"] + kl_coef * out["kl_loss"]
    return out


def numerical_gradient(inputs, dual, ranges_low, ranges_high, kl_coef, high_kl_coef, h=1e-6):
    """Central differences of the float64 total loss with respect to W and P, keeping the
    token split fixed (it is computed without gradient, as in the paper)."""
    W0 = arr(inputs["W"])
    P0 = arr(inputs["P"])
    base = dual_token_terms(inputs, W0, P0, dual, ranges_low, ranges_high, kl_coef, high_kl_coef)

    def total(W, P):
        logp, _ = forward(W, P, inputs["input_ids"])
        response_mask = inputs["attention_mask"][:, LP:]
        rh = ranges_high if dual else ranges_low
        losses, _ = policy_token_losses(logp, inputs["old_log_probs"], inputs["advantages"], base["low"], ranges_low, rh)
        kld = low_var_kl(logp, inputs["ref_log_prob"])
        value = masked_mean(losses, response_mask)
        if dual:
            value += kl_coef * masked_mean(kld, base["low"])
            if base["high"].any():
                value += high_kl_coef * masked_mean(kld, base["high"])
        else:
            value += kl_coef * masked_mean(kld, response_mask)
        return value

    grads = {}
    for name, X in (("W", W0), ("P", P0)):
        g = np.zeros_like(X)
        for idx in np.ndindex(X.shape):
            Xp, Xm = X.copy(), X.copy()
            Xp[idx] += h
            Xm[idx] -= h
            if name == "W":
                g[idx] = (total(Xp, P0) - total(Xm, P0)) / (2 * h)
            else:
                g[idx] = (total(W0, Xp) - total(W0, Xm)) / (2 * h)
        grads[name] = g
    return grads


def assert_gradient(got, expected, what):
    got = arr(got)
    scale = float(np.abs(expected).max())
    np.testing.assert_allclose(got, expected, rtol=0, atol=1e-4 * scale + 1e-6, err_msg=what)
