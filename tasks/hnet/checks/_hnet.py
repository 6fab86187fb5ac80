"""Helpers for the H-Net checks: an independent float64 numpy re-derivation of the
dynamic-chunking computations (routing probabilities, chunk selection, the EMA over
chunks and its upsampling), written from the paper's equations, not from the code."""

import numpy as np

from _hnet_inputs import adjacent_boundary_prob


def arr(x):
    return np.asarray(x)


def expected_routing(h, wq, wk, starts=(0,)):
    """Boundary probability per token (the first token of each sequence forced to 1) and
    the hard decisions p >= 0.5 (no probability is within 1e-3 of 0.5 by construction)."""
    p = adjacent_boundary_prob(h, wq, wk)
    pad = np.ones(p.shape[:-1] + (1,))
    p = np.concatenate([pad, p], axis=-1)
    p[..., list(starts)] = 1.0
    return p, p > 0.5


def expected_chunks(hidden, bmask):
    """Per row: the states at the boundary positions, in order."""
    return [hidden[b][bmask[b]] for b in range(hidden.shape[0])]


def expected_dechunk(chunks, bmask, prob, seq_starts=None):
    """The paper's smoothing and upsampling, token by token, for one sequence of tokens:
    z_bar_k = P_k z_k + (1 - P_k) z_bar_{k-1} over the chunks (z_bar_{-1} = 0, P clamped to
    [1e-4, 1 - 1e-4] as the authors do), then every token takes the smoothed state of the
    last boundary at or before it. seq_starts: token positions where a new sequence
    starts (the smoothed state restarts from 0)."""
    prob = np.clip(prob.astype(np.float64), 1e-4, 1 - 1e-4)
    chunks = chunks.astype(np.float64)
    starts = set(seq_starts or [0])
    out = np.zeros((len(bmask), chunks.shape[-1]))
    z = np.zeros(chunks.shape[-1])
    k = -1
    for pos in range(len(bmask)):
        if pos in starts:
            z = np.zeros(chunks.shape[-1])
        if bmask[pos]:
            k += 1
            z = prob[pos] * chunks[k] + (1 - prob[pos]) * z
        out[pos] = z
    return out


def expected_ratio_loss(p, bmask, N):
    """L = N / (N - 1) * ((N - 1) F G + (1 - F)(1 - G)), F the share of boundaries, G the
    mean boundary probability; and dL/dp_t = N / (N - 1) * ((N - 1) F - (1 - F)) / n."""
    F = bmask.astype(np.float64).mean()
    G = p.astype(np.float64).mean()
    loss = N / (N - 1) * ((N - 1) * F * G + (1 - F) * (1 - G))
    grad = np.full(p.shape, N / (N - 1) * ((N - 1) * F - (1 - F)) / p.size)
    return loss, grad
