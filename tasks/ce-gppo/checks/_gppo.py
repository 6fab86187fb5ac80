"""Helpers the ce-gppo checks share: the paper's objective written out in numpy (float64),
independently of the task's code, and comparisons with stated tolerances.

CE-GPPO's per-token term, with r = exp(log_prob - old_log_prob), sg() the stop-gradient
and the verl dual clip for A < 0 kept from the authors' code:
  A < 0 and r < 1 - eps_low :  -beta1 (1 - eps_low)  A r / sg(r)   value -beta1 (1 - eps_low) A,  d/dlog_prob the same
  A > 0 and r > 1 + eps_high:  -beta2 (1 + eps_high) A r / sg(r)   value -beta2 (1 + eps_high) A, d/dlog_prob the same
  otherwise                 :  -A r                                value -A r, d/dlog_prob -A r
  then, for A < 0, min(term, -A c): where -A r > -A c the token's value is -A c and its gradient 0.

Tolerances. The task's code runs in float32 (the entropy case in float64). Per-token values
and gradients against the float64 recomputation: rtol 2e-5, atol 2e-6 (a float32 exp and a
few products, |values| < 10); aggregated losses: rtol 2e-5, atol 2e-5 (sums of up to 72
float32 terms in any order); fractions: atol 1e-6 (counts over at most 72 tokens, exact in
float32 up to the 1e-8 of verl's masked_mean). Against the reference's own outputs (the same
float32 computation, perhaps in another order): rtol 1e-5, atol 2e-6.
"""

import numpy as np

REF_RTOL, REF_ATOL = 1e-5, 2e-6
TOK = dict(rtol=2e-5, atol=2e-6)
AGG = dict(rtol=2e-5, atol=2e-5)
FRAC = dict(rtol=0, atol=1e-6)


def arr(x):
    return np.asarray(x, dtype=float)


def close(actual, desired, rtol=REF_RTOL, atol=REF_ATOL, what="value"):
    assert actual is not None, f"{what}: got None"
    a, d = arr(actual), arr(desired)
    assert a.shape == d.shape, f"{what}: shape {a.shape} != {d.shape}"
    np.testing.assert_allclose(a, d, rtol=rtol, atol=atol, err_msg=what)


def settings(kwargs):
    eps_low = kwargs.get("cliprange_low") if kwargs.get("cliprange_low") is not None else kwargs["cliprange"]
    eps_high = kwargs.get("cliprange_high") if kwargs.get("cliprange_high") is not None else kwargs["cliprange"]
    return eps_low, eps_high, kwargs["gppo_loss_beta1"], kwargs["gppo_loss_beta2"]


def token_terms(old_log_prob, log_prob, advantages, eps_low, eps_high, beta1, beta2, c=3.0):
    """(value, gradient with respect to log_prob, low, high, dual-clipped) per token."""
    r = np.exp(arr(log_prob) - arr(old_log_prob))
    A = arr(advantages)
    low = (r < 1 - eps_low) & (A < 0)
    high = (r > 1 + eps_high) & (A > 0)
    value = np.where(low, -beta1 * (1 - eps_low) * A, np.where(high, -beta2 * (1 + eps_high) * A, -A * r))
    grad = value.copy()
    dual = (A < 0) & (value > -A * c)
    value = np.where(dual, -A * c, value)
    grad = np.where(dual, 0.0, grad)
    return value, grad, low, high, dual


def agg_weights(mask, mode):
    """loss = sum(weights * per-token values), as verl's agg_loss aggregates."""
    m = arr(mask)
    B, T = m.shape
    if mode == "token-mean":
        return m / (m.sum() + 1e-8)
    if mode == "seq-mean-token-sum":
        return m / B
    if mode == "seq-mean-token-mean":
        return m / (B * m.sum(-1, keepdims=True))
    if mode == "seq-mean-token-sum-norm":
        return m / T
    raise ValueError(mode)


def expected(batch, mode, kwargs, c=3.0):
    old_log_prob, log_prob, advantages, mask = (arr(x) for x in batch)
    value, grad, low, high, dual = token_terms(old_log_prob, log_prob, advantages, *settings(kwargs), c=c)
    w = agg_weights(mask, mode)
    msum = mask.sum()
    return {
        "per_token": value,
        "per_token_grad": grad,
        "pg_loss": float((w * value).sum()),
        "grad": w * grad,
        "pg_clipfrac": float(((low | high) * mask).sum() / msum),
        "ppo_kl": float(((old_log_prob - log_prob) * mask).sum() / msum),
        "pg_clipfrac_lower": float((dual * mask).sum() / msum),
    }


def assert_matches(out, exp, what, per_token=False):
    close(out["pg_loss"], exp["pg_loss"], **AGG, what=f"{what}: pg_loss")
    close(out["grad"], exp["grad"], **TOK, what=f"{what}: d pg_loss / d log_prob")
    close(out["pg_clipfrac"], exp["pg_clipfrac"], **FRAC, what=f"{what}: pg_clipfrac")
    close(out["pg_clipfrac_lower"], exp["pg_clipfrac_lower"], **FRAC, what=f"{what}: pg_clipfrac_lower")
    close(out["ppo_kl"], exp["ppo_kl"], **AGG, what=f"{what}: ppo_kl")
    if per_token:
        close(out["per_token"], exp["per_token"], **TOK, what=f"{what}: per-token loss")
        close(out["per_token_grad"], exp["per_token_grad"], **TOK, what=f"{what}: per-token gradient")
