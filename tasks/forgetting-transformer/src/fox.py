"""Forgetting Attention, the attention of the Forgetting Transformer (FoX; Lin et al., 2025), in numpy.

A scalar forget gate f_t = σ(w_fᵀ x_t + b_f) per head down-weights the unnormalised
attention scores of past tokens:

    o_i = Σ_{j≤i} F_ij exp(q_iᵀ k_j / √d) v_j / Σ_{j≤i} F_ij exp(q_iᵀ k_j / √d),
    F_ij = Π_{l=j+1}^{i} f_l,

i.e. softmax attention with the bias D_ij = log F_ij added to the causal logits.
Computed three ways: the quadratic form, a token-by-token (decoding) form with a
KV cache, and a blockwise form with an online softmax.
"""

from __future__ import annotations

import numpy as np


def forget_gate_log(x: np.ndarray, w_f: np.ndarray, b_f: np.ndarray | float) -> np.ndarray:
    """log f_t = log σ(w_fᵀ x_t + b_f), computed without overflow.

    x: (T, d_model); w_f: (d_model,) for one head or (d_model, H) for H heads.
    """
    # <paper2code name="forget gate">
    z = x @ w_f + b_f
    log_f = np.minimum(z, 0.0) - np.log1p(np.exp(-np.abs(z)))
    # </paper2code name="forget gate">
    return log_f


def decay_bias(log_f: np.ndarray) -> np.ndarray:
    """The (T, T) matrix D with D[i, j] = Σ_{l=j+1}^{i} log f_l for j ≤ i and −∞ for j > i."""
    T = log_f.shape[0]
    # <paper2code name="decay bias">
    c = np.cumsum(log_f)
    D = c[:, None] - c[None, :]
    D = np.where(np.tril(np.ones((T, T), dtype=bool)), D, -np.inf)
    # </paper2code name="decay bias">
    return D


def forgetting_attention(q: np.ndarray, k: np.ndarray, v: np.ndarray, log_f: np.ndarray) -> np.ndarray:
    """O = softmax(q kᵀ / √d + D) v for one head. q, k: (T, d); v: (T, d_v); log_f: (T,)."""
    d = q.shape[-1]
    # <paper2code name="forgetting attention">
    D = decay_bias(log_f)
    # <paper2code name="attention logits">
    logits = q @ k.T / np.sqrt(d) + D
    # </paper2code name="attention logits">
    # <paper2code name="causal softmax">
    m = logits.max(axis=1, keepdims=True)
    weights = np.exp(logits - m)
    weights = weights / weights.sum(axis=1, keepdims=True)
    # </paper2code name="causal softmax">
    out = weights @ v
    # </paper2code name="forgetting attention">
    return out


def decode_step(
    cache: tuple[np.ndarray, np.ndarray, np.ndarray],
    q_t: np.ndarray,
    k_t: np.ndarray,
    v_t: np.ndarray,
    log_f_t: float,
) -> tuple[np.ndarray, tuple[np.ndarray, np.ndarray, np.ndarray]]:
    """One decoding step. cache = (keys (t-1, d), values (t-1, d_v), bias (t-1,)) holds one
    additive bias per cached key. Returns (o_t, the cache including token t)."""
    keys, values, bias = cache
    d = q_t.shape[0]
    keys = np.vstack([keys, k_t[None]])
    values = np.vstack([values, v_t[None]])
    # <paper2code name="decay cached biases">
    bias = np.append(bias + log_f_t, 0.0)
    # </paper2code name="decay cached biases">
    # <paper2code name="attend over cache">
    scores = keys @ q_t / np.sqrt(d) + bias
    p = np.exp(scores - scores.max())
    o_t = p @ values / p.sum()
    # </paper2code name="attend over cache">
    return o_t, (keys, values, bias)


def empty_cache(d: int, d_v: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    return np.zeros((0, d)), np.zeros((0, d_v)), np.zeros(0)


def forgetting_attention_recurrent(q: np.ndarray, k: np.ndarray, v: np.ndarray, log_f: np.ndarray) -> np.ndarray:
    """Token by token, as in decoding, with a key-value-bias cache."""
    T, d = q.shape
    out = np.zeros((T, v.shape[1]))
    # <paper2code name="recurrent form">
    cache = empty_cache(d, v.shape[1])
    for t in range(T):
        out[t], cache = decode_step(cache, q[t], k[t], v[t], log_f[t])
    # </paper2code name="recurrent form">
    return out


def forgetting_attention_blockwise(
    q: np.ndarray, k: np.ndarray, v: np.ndarray, log_f: np.ndarray, block: int
) -> np.ndarray:
    """FlashAttention-style: query blocks against key blocks with an online softmax; the
    decay bias of a (query block, key block) tile comes from the cumulative sums c."""
    T, d = q.shape
    d_v = v.shape[1]
    c = np.cumsum(log_f)
    out = np.zeros((T, d_v))
    # <paper2code name="blockwise form">
    for i0 in range(0, T, block):
        i1 = min(i0 + block, T)
        m = np.full(i1 - i0, -np.inf)
        l = np.zeros(i1 - i0)
        acc = np.zeros((i1 - i0, d_v))
        for j0 in range(0, i1, block):
            j1 = min(j0 + block, T)
            # <paper2code name="block logits">
            s = q[i0:i1] @ k[j0:j1].T / np.sqrt(d) + (c[i0:i1, None] - c[None, j0:j1])
            causal = np.arange(i0, i1)[:, None] >= np.arange(j0, j1)[None, :]
            s = np.where(causal, s, -np.inf)
            # </paper2code name="block logits">
            # <paper2code name="online softmax update">
            m_new = np.maximum(m, s.max(axis=1))
            scale = np.exp(m - m_new)
            p = np.exp(s - m_new[:, None])
            l = l * scale + p.sum(axis=1)
            acc = acc * scale[:, None] + p @ v[j0:j1]
            m = m_new
            # </paper2code name="online softmax update">
        out[i0:i1] = acc / l[:, None]
    # </paper2code name="blockwise form">
    return out


def fox_attention_layer(
    x: np.ndarray,
    Wq: np.ndarray,
    Wk: np.ndarray,
    Wv: np.ndarray,
    Wf: np.ndarray,
    bf: np.ndarray,
    Wo: np.ndarray,
    n_heads: int,
) -> np.ndarray:
    """Multi-head forgetting attention. x: (T, d_model); Wq, Wk, Wv: (d_model, H·d_head);
    Wf: (d_model, H), bf: (H,) give one forget gate per head; Wo: (H·d_head, d_model)."""
    T = x.shape[0]
    d_head = Wq.shape[1] // n_heads
    # <paper2code name="multi-head layer">
    q = (x @ Wq).reshape(T, n_heads, d_head)
    k = (x @ Wk).reshape(T, n_heads, d_head)
    v = (x @ Wv).reshape(T, n_heads, d_head)
    log_f = forget_gate_log(x, Wf, bf)
    heads = [forgetting_attention(q[:, h], k[:, h], v[:, h], log_f[:, h]) for h in range(n_heads)]
    out = np.concatenate(heads, axis=1) @ Wo
    # </paper2code name="multi-head layer">
    return out
