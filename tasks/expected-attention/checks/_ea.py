"""Shared by the checks: the cases' inputs regenerated from RCB_SEED, and Expected
Attention worked out in numpy (float64) from its definition, with no kvpress code.

RoPE as transformers applies it (rotate-half layout): at position t the query x
becomes cos_t * x + sin_t * rotate_half(x), with angles t * theta^(-2i/d) repeated
over the two halves. For one future query drawn from N(mu, Sigma) (pre-RoPE), the
position-averaged rotation Rbar = mean_t R_t gives mu' = Rbar mu and
Sigma' = Rbar Sigma Rbar^T, and for a key k

    E[exp(q.k / sqrt(d))] = exp(mu'.k / sqrt(d) + k^T Sigma' k / (2 d)),

normalised over the keys of the head (a softmax of the exponent), averaged over the
query heads that share a key-value head, and multiplied by ||v|| (after adding epsilon).
"""

import os

import numpy as np

SEED = int(os.environ.get("RCB_SEED", "0"))

HIDDEN, HEADS, KV_HEADS, HEAD_DIM, THETA = 32, 4, 2, 16, 256.0


def inputs(offset, bsz, seq_len, num_key_value_heads=KV_HEADS):
    """Wq, hidden states, keys and values, drawn as the cases draw them."""
    rng = np.random.default_rng(SEED + offset)
    wq = rng.normal(size=(HEADS * HEAD_DIM, HIDDEN)) / np.sqrt(HIDDEN)
    shift = rng.normal(size=HIDDEN)
    h = rng.normal(size=(bsz, seq_len, HIDDEN)) + shift
    keys = rng.normal(size=(bsz, num_key_value_heads, seq_len, HEAD_DIM))
    values = rng.normal(size=(bsz, num_key_value_heads, seq_len, HEAD_DIM)) * rng.uniform(0.2, 2.0, size=(1, 1, seq_len, 1))
    return wq, h, keys, values


def random_statistics(offset, bsz=2, heads=HEADS):
    rng = np.random.default_rng(SEED + offset)
    mu = rng.normal(size=(bsz, heads, HEAD_DIM))
    a = rng.normal(size=(bsz, heads, HEAD_DIM, HEAD_DIM)) / np.sqrt(HEAD_DIM)
    return mu, a @ np.swapaxes(a, -1, -2)


def rotate_half(x):
    half = x.shape[-1] // 2
    return np.concatenate([-x[..., half:], x[..., :half]], axis=-1)


def rope(x, position, d=HEAD_DIM, theta=THETA):
    """x (..., d) rotated to ``position`` as transformers' Llama does."""
    inv_freq = theta ** (-np.arange(0, d, 2) / d)
    angles = np.concatenate([position * inv_freq, position * inv_freq])
    return np.cos(angles) * x + np.sin(angles) * rotate_half(x)


def mean_rotation(q_len, n_future, d=HEAD_DIM):
    """Rbar = mean over t in [q_len, q_len + n_future) of the RoPE matrix R_t (columns:
    the rotated unit vectors)."""
    eye = np.eye(d)
    return np.mean([rope(eye, t).T for t in range(q_len, q_len + n_future)], axis=0)


def prerope_queries(wq, h):
    """(bsz, HEADS, s, HEAD_DIM) queries of hidden states h (bsz, s, HIDDEN), before RoPE."""
    q = h @ wq.T
    return q.reshape(h.shape[0], h.shape[1], HEADS, HEAD_DIM).transpose(0, 2, 1, 3)


def statistics(wq, h, n_sink, n_future, use_covariance=True):
    """The RoPE-averaged mean (bsz, HEADS, d) and covariance (bsz, HEADS, d, d) of the
    queries after the first n_sink tokens; the covariance is the population one (divided
    by the number of tokens), as the authors compute it."""
    q = prerope_queries(wq, h[:, n_sink:])
    mu = q.mean(axis=2)
    rbar = mean_rotation(h.shape[1], n_future)
    mu_rot = mu @ rbar.T
    if not use_covariance:
        return mu_rot, None
    c = q - mu[:, :, None, :]
    cov = np.einsum("bnsi,bnsj->bnij", c, c) / q.shape[2]
    return mu_rot, rbar @ cov @ rbar.T


def softmax(x):
    e = np.exp(x - x.max(axis=-1, keepdims=True))
    return e / e.sum(axis=-1, keepdims=True)


def expected_scores(wq, h, keys, values, n_sink, n_future, use_covariance=True, use_vnorm=True, epsilon=0.0):
    """Scores (bsz, kv_heads, n - n_sink) of the non-sink keys (the sinks are left out:
    the press pads them with a value above every score)."""
    mu, cov = statistics(wq, h, n_sink, n_future, use_covariance)
    k = keys[:, :, n_sink:]
    v = values[:, :, n_sink:]
    bsz, kv, n, d = k.shape
    groups = HEADS // kv
    k_rep = np.repeat(k, groups, axis=1)  # query head j reads key-value head j // groups
    logits = np.einsum("bhd,bhnd->bhn", mu, k_rep) / np.sqrt(d)
    if use_covariance:
        logits = logits + np.einsum("bhnd,bhde,bhne->bhn", k_rep, cov, k_rep) / (2 * d)
    attn = softmax(logits).reshape(bsz, kv, groups, n).mean(axis=2)
    if use_vnorm:
        attn = (attn + epsilon) * np.linalg.norm(v, axis=-1)
    return attn


def close(actual, desired, rtol=1e-6, atol_rel=1e-8, what="value"):
    """``actual`` equals ``desired`` up to rounding: relative ``rtol`` plus an absolute
    floor of ``atol_rel`` times the largest entry."""
    assert actual is not None, f"{what}: got None"
    actual = np.asarray(actual, dtype=float)
    desired = np.asarray(desired, dtype=float)
    assert actual.shape == desired.shape, f"{what}: shape {actual.shape} != {desired.shape}"
    atol = atol_rel * max(1.0, float(np.max(np.abs(desired))))
    np.testing.assert_allclose(actual, desired, rtol=rtol, atol=atol, err_msg=what)


def top_positions(scores, n_sink, n_kept):
    """The positions a press keeps from scores (bsz, heads, n - n_sink) of the non-sink
    keys when it keeps n_kept of n: the sinks, then the best-scored others; sorted."""
    best = np.argsort(-scores, axis=-1, kind="stable")[..., : n_kept - n_sink] + n_sink
    sinks = np.broadcast_to(np.arange(n_sink), scores.shape[:2] + (n_sink,))
    return np.sort(np.concatenate([sinks, best], axis=-1), axis=-1)
