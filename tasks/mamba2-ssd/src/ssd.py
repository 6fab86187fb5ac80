"""Structured state space duality (Mamba-2; Dao & Gu, 2024) for one head, in numpy.

The scalar-decay selective SSM

    h_t = a_t h_{t-1} + B_t x_t^T        h_t: (N, P)
    y_t = h_t^T C_t                      y_t: (P,)

is computed three ways: as a recurrence (linear in T), as a masked quadratic
"attention" form y = M x with the 1-semiseparable matrix M = L ∘ (C B^T), and by
the chunked block decomposition of M (the SSD algorithm).

Shapes: x (T, P), log_a (T,) with a_t = exp(log_a[t]), B (T, N), C (T, N).
"""

from __future__ import annotations

import numpy as np


def softplus(x: np.ndarray) -> np.ndarray:
    return np.logaddexp(0.0, x)


def silu(x: np.ndarray) -> np.ndarray:
    return x / (1.0 + np.exp(-x))


def discretize(
    x: np.ndarray, dt_raw: np.ndarray, dt_bias: float, A_log: float
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Mamba-2 parametrisation: step size Δ_t, log decay log a_t = Δ_t A, input Δ_t x_t.

    Returns (log_a, x_bar, dt) with shapes (T,), (T, P), (T,).
    """
    # <paper2code name="discretize">
    dt = softplus(dt_raw + dt_bias)
    A = -np.exp(A_log)
    log_a = dt * A
    x_bar = x * dt[:, None]
    # </paper2code name="discretize">
    return log_a, x_bar, dt


def segsum(log_a: np.ndarray) -> np.ndarray:
    """Segment sums over the last axis: out[..., i, j] = sum_{k=j+1}^{i} log_a[..., k]
    for i >= j (0 on the diagonal), and -inf for i < j."""
    # <paper2code name="segsum">
    T = log_a.shape[-1]
    cs = np.cumsum(log_a, axis=-1)
    out = cs[..., :, None] - cs[..., None, :]
    mask = np.tril(np.ones((T, T), dtype=bool))
    out = np.where(mask, out, -np.inf)
    # </paper2code name="segsum">
    return out


def ssm_recurrent(
    x: np.ndarray, log_a: np.ndarray, B: np.ndarray, C: np.ndarray, h0: np.ndarray | None = None
) -> tuple[np.ndarray, np.ndarray]:
    """The SSM as a recurrence. Returns (y, h_T) with shapes (T, P), (N, P)."""
    T, P = x.shape
    N = B.shape[1]
    h = np.zeros((N, P)) if h0 is None else np.array(h0, dtype=float)
    y = np.zeros((T, P))
    # <paper2code name="recurrent scan">
    for t in range(T):
        h = np.exp(log_a[t]) * h + np.outer(B[t], x[t])
        y[t] = C[t] @ h
    # </paper2code name="recurrent scan">
    return y, h


def ssm_matrix(log_a: np.ndarray, B: np.ndarray, C: np.ndarray) -> np.ndarray:
    """The (T, T) sequence-transformation matrix M with y = M x:
    M[j, i] = C_j^T B_i a_j a_{j-1} ... a_{i+1} for j >= i, and 0 for j < i."""
    # <paper2code name="semiseparable matrix">
    L = np.exp(segsum(log_a))
    M = L * (C @ B.T)
    # </paper2code name="semiseparable matrix">
    return M


def ssd_quadratic(
    x: np.ndarray, log_a: np.ndarray, B: np.ndarray, C: np.ndarray, h0: np.ndarray | None = None
) -> np.ndarray:
    """The SSM in its quadratic (masked attention) form. Returns y (T, P)."""
    # <paper2code name="quadratic form">
    M = ssm_matrix(log_a, B, C)
    y = M @ x
    # </paper2code name="quadratic form">
    if h0 is not None:
        # <paper2code name="initial state term">
        decay_from_start = np.exp(np.cumsum(log_a))
        y = y + decay_from_start[:, None] * (C @ h0)
        # </paper2code name="initial state term">
    return y


def ssd_chunked(
    x: np.ndarray,
    log_a: np.ndarray,
    B: np.ndarray,
    C: np.ndarray,
    chunk_size: int,
    h0: np.ndarray | None = None,
) -> tuple[np.ndarray, np.ndarray]:
    """The SSD algorithm: block decomposition of M into chunks of length Q = chunk_size.

    Returns (y, h_T) with shapes (T, P), (N, P). T must be a multiple of chunk_size.
    """
    T, P = x.shape
    N = B.shape[1]
    Q = chunk_size
    if T % Q != 0:
        raise ValueError("sequence length must be a multiple of chunk_size")
    nc = T // Q
    # <paper2code name="chunked ssd">
    xc = x.reshape(nc, Q, P)
    Ac = log_a.reshape(nc, Q)
    Bc = B.reshape(nc, Q, N)
    Cc = C.reshape(nc, Q, N)
    A_cumsum = np.cumsum(Ac, axis=-1)
    # <paper2code name="diagonal blocks">
    L = np.exp(segsum(Ac))
    y_diag = np.einsum("cln,csn,cls,csp->clp", Cc, Bc, L, xc)
    # </paper2code name="diagonal blocks">
    # <paper2code name="chunk states">
    decay_states = np.exp(A_cumsum[:, -1:] - A_cumsum)
    states = np.einsum("cln,cl,clp->cnp", Bc, decay_states, xc)
    # </paper2code name="chunk states">
    # <paper2code name="inter-chunk recurrence">
    h = np.zeros((N, P)) if h0 is None else np.array(h0, dtype=float)
    prev_states = np.empty((nc, N, P))
    for c in range(nc):
        prev_states[c] = h
        h = np.exp(A_cumsum[c, -1]) * h + states[c]
    # </paper2code name="inter-chunk recurrence">
    # <paper2code name="state to output">
    y_off = np.einsum("cln,cnp,cl->clp", Cc, prev_states, np.exp(A_cumsum))
    # </paper2code name="state to output">
    y = (y_diag + y_off).reshape(T, P)
    # </paper2code name="chunked ssd">
    return y, h


def ssd_head(
    x: np.ndarray,
    z: np.ndarray,
    dt_raw: np.ndarray,
    dt_bias: float,
    A_log: float,
    B: np.ndarray,
    C: np.ndarray,
    D: float,
    chunk_size: int,
    h0: np.ndarray | None = None,
) -> tuple[np.ndarray, np.ndarray]:
    """One Mamba-2 SSD head: discretise, run SSD, add the D skip and gate with SiLU(z).

    x, z: (T, P). Returns (y, h_T).
    """
    log_a, x_bar, _ = discretize(x, dt_raw, dt_bias, A_log)
    y, h = ssd_chunked(x_bar, log_a, B, C, chunk_size, h0)
    # <paper2code name="skip and gate">
    y = y + D * x
    y = y * silu(z)
    # </paper2code name="skip and gate">
    return y, h
