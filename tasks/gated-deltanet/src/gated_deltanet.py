"""Gated DeltaNet (Yang, Kautz & Hatamizadeh, 2024): the gated delta rule in numpy.

One head. The state S_t ∈ R^{d_v × d_k} follows

    S_t = S_{t-1} α_t (I − β_t k_t k_tᵀ) + β_t v_t k_tᵀ,        o_t = S_t q_t,

computed step by step (recurrent form) or chunk by chunk with the WY / UT
representation of the products of generalised Householder matrices (chunkwise
form). Decays are passed as log α_t (≤ 0) for numerical stability.

Shapes: Q, K (T, d_k); V (T, d_v); log_alpha, beta (T,).
"""

from __future__ import annotations

import numpy as np


def softplus(x: np.ndarray) -> np.ndarray:
    return np.logaddexp(0.0, x)


def sigmoid(x: np.ndarray) -> np.ndarray:
    return 1.0 / (1.0 + np.exp(-x))


def silu(x: np.ndarray) -> np.ndarray:
    return x * sigmoid(x)


def l2_normalize(x: np.ndarray, eps: float = 1e-6) -> np.ndarray:
    """Scale each row (last axis) to unit L2 norm: x / sqrt(Σ x² + eps)."""
    # <paper2code name="l2 normalize">
    norm = np.sqrt(np.sum(x * x, axis=-1, keepdims=True) + eps)
    x = x / norm
    # </paper2code name="l2 normalize">
    return x


def short_conv(x: np.ndarray, w: np.ndarray) -> np.ndarray:
    """Causal depthwise convolution over time: y_t = Σ_{i=0}^{K-1} w[i] ⊙ x_{t-i}, with
    x_{t} = 0 for t < 0. x: (T, channels); w: (K, channels)."""
    T = x.shape[0]
    K = w.shape[0]
    # <paper2code name="short convolution">
    y = np.zeros_like(x)
    for i in range(min(K, T)):
        y[i:] += w[i] * x[: T - i]
    # </paper2code name="short convolution">
    return y


def gates(
    a_raw: np.ndarray, b_raw: np.ndarray, A_log: float, dt_bias: float
) -> tuple[np.ndarray, np.ndarray]:
    """Decay gate log α_t = −exp(A_log) · softplus(a_t + dt_bias) and writing strength β_t = σ(b_t)."""
    # <paper2code name="gates">
    log_alpha = -np.exp(A_log) * softplus(a_raw + dt_bias)
    beta = sigmoid(b_raw)
    # </paper2code name="gates">
    return log_alpha, beta


def gated_delta_recurrent(
    Q: np.ndarray,
    K: np.ndarray,
    V: np.ndarray,
    log_alpha: np.ndarray,
    beta: np.ndarray,
    S0: np.ndarray | None = None,
) -> tuple[np.ndarray, np.ndarray]:
    """The gated delta rule, one step at a time. Returns (O (T, d_v), S_T (d_v, d_k))."""
    T, d_k = K.shape
    d_v = V.shape[1]
    S = np.zeros((d_v, d_k)) if S0 is None else np.array(S0, dtype=float)
    O = np.zeros((T, d_v))
    I = np.eye(d_k)
    # <paper2code name="recurrent form">
    for t in range(T):
        alpha = np.exp(log_alpha[t])
        S = alpha * S @ (I - beta[t] * np.outer(K[t], K[t])) + beta[t] * np.outer(V[t], K[t])
        O[t] = S @ Q[t]
    # </paper2code name="recurrent form">
    return O, S


def chunk_decay(log_alpha: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Within one chunk: g_r = Σ_{i≤r} log α_i (so γ_r = exp(g_r)) and the decay matrix
    Γ[r, i] = γ_r / γ_i for i ≤ r, 0 for i > r."""
    C = log_alpha.shape[0]
    # <paper2code name="chunk decay">
    g = np.cumsum(log_alpha)
    diff = g[:, None] - g[None, :]
    causal = np.tril(np.ones((C, C), dtype=bool))
    Gamma = np.exp(np.where(causal, diff, -np.inf))
    # </paper2code name="chunk decay">
    return g, Gamma


def strictly_lower_A(K: np.ndarray, beta: np.ndarray, Gamma: np.ndarray) -> np.ndarray:
    """A = strictLower(diag(β) (Γ ∘ K Kᵀ)): A[r, i] = β_r Γ[r, i] k_rᵀ k_i for i < r, else 0."""
    # <paper2code name="strictly lower A">
    A = np.tril(beta[:, None] * Gamma * (K @ K.T), k=-1)
    # </paper2code name="strictly lower A">
    return A


def ut_transform(A: np.ndarray, beta: np.ndarray) -> np.ndarray:
    """T = (I + A)^{-1} diag(β) for a strictly lower-triangular A, by forward substitution."""
    C = A.shape[0]
    # <paper2code name="forward substitution">
    Tm = np.zeros((C, C))
    for r in range(C):
        Tm[r] = -A[r, :r] @ Tm[:r]
        Tm[r, r] += 1.0
    Tm = Tm * beta[None, :]
    # </paper2code name="forward substitution">
    return Tm


def chunk_step(
    Qc: np.ndarray,
    Kc: np.ndarray,
    Vc: np.ndarray,
    log_alpha_c: np.ndarray,
    beta_c: np.ndarray,
    S: np.ndarray,
) -> tuple[np.ndarray, np.ndarray]:
    """One chunk of the chunkwise form from the state S entering it.
    Returns (outputs of the chunk, state leaving it)."""
    # <paper2code name="chunk step">
    g, Gamma = chunk_decay(log_alpha_c)
    Tm = ut_transform(strictly_lower_A(Kc, beta_c, Gamma), beta_c)
    gamma = np.exp(g)
    # <paper2code name="W and U">
    W = Tm @ (gamma[:, None] * Kc)
    U = Tm @ Vc
    U_new = U - W @ S.T
    # </paper2code name="W and U">
    # <paper2code name="chunk output">
    O = gamma[:, None] * (Qc @ S.T) + ((Qc @ Kc.T) * Gamma) @ U_new
    # </paper2code name="chunk output">
    # <paper2code name="chunk state update">
    decay_to_end = np.exp(g[-1] - g)
    S = gamma[-1] * S + U_new.T @ (decay_to_end[:, None] * Kc)
    # </paper2code name="chunk state update">
    # </paper2code name="chunk step">
    return O, S


def gated_delta_chunkwise(
    Q: np.ndarray,
    K: np.ndarray,
    V: np.ndarray,
    log_alpha: np.ndarray,
    beta: np.ndarray,
    chunk_size: int,
    S0: np.ndarray | None = None,
) -> tuple[np.ndarray, np.ndarray]:
    """The chunkwise form; the last chunk may be shorter. Returns (O, S_T)."""
    T, d_k = K.shape
    d_v = V.shape[1]
    S = np.zeros((d_v, d_k)) if S0 is None else np.array(S0, dtype=float)
    O = np.zeros((T, d_v))
    # <paper2code name="chunkwise form">
    for s in range(0, T, chunk_size):
        e = min(s + chunk_size, T)
        O[s:e], S = chunk_step(Q[s:e], K[s:e], V[s:e], log_alpha[s:e], beta[s:e], S)
    # </paper2code name="chunkwise form">
    return O, S


def gated_rmsnorm(o: np.ndarray, gate: np.ndarray, weight: np.ndarray, eps: float = 1e-6) -> np.ndarray:
    """Output normalisation and gate: RMSNorm(o) ⊙ weight ⊙ SiLU(gate), per row."""
    # <paper2code name="output norm and gate">
    rms = np.sqrt(np.mean(o * o, axis=-1, keepdims=True) + eps)
    o = o / rms * weight * silu(gate)
    # </paper2code name="output norm and gate">
    return o


def gated_deltanet_head(
    x: np.ndarray,
    Wq: np.ndarray,
    Wk: np.ndarray,
    Wv: np.ndarray,
    conv_q: np.ndarray,
    conv_k: np.ndarray,
    conv_v: np.ndarray,
    wa: np.ndarray,
    wb: np.ndarray,
    A_log: float,
    dt_bias: float,
    Wg: np.ndarray,
    norm_weight: np.ndarray,
    chunk_size: int,
) -> tuple[np.ndarray, np.ndarray]:
    """One head from token features x (T, d): projections with short convolutions, gates,
    the chunkwise gated delta rule, and the gated output norm. Returns (outputs, final state)."""
    # <paper2code name="project queries keys values">
    Q = l2_normalize(silu(short_conv(x @ Wq, conv_q)))
    K = l2_normalize(silu(short_conv(x @ Wk, conv_k)))
    V = silu(short_conv(x @ Wv, conv_v))
    # </paper2code name="project queries keys values">
    log_alpha, beta = gates(x @ wa, x @ wb, A_log, dt_bias)
    O, S = gated_delta_chunkwise(Q, K, V, log_alpha, beta, chunk_size)
    return gated_rmsnorm(O, x @ Wg, norm_weight), S
