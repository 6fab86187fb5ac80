"""Seeded inputs for the H-Net dynamic-chunking cases and checks (numpy only).

Both sandboxes import this file (inputs/ is on the path in each): the checks rebuild
every input from the same seed instead of reading it back from the cases. RCB_SEED
(0 when grading; rcb validate runs 0..9) varies every random input.
"""

import os

import numpy as np

SEED = 1000 * int(os.environ.get("RCB_SEED", "0"))

D_ROUTE = 8
ROUTE_LENGTHS = (12, 9, 5)  # right-padded batch: valid tokens per row
PACKED_CU = (0, 6, 13, 20)  # three packed sequences of 6, 7 and 7 tokens
TIE_GAP = 1e-3  # no boundary probability closer than this to the 0.5 threshold


def length_mask(lengths, L):
    return np.arange(L)[None, :] < np.asarray(lengths)[:, None]


def _normalize(v):
    return v / np.linalg.norm(v, axis=-1, keepdims=True)


def adjacent_boundary_prob(h, wq, wk):
    """(1 - cos(q_t, k_{t+1})) / 2 for each adjacent pair along axis -2 (float64)."""
    h = h.astype(np.float64)
    q = _normalize(h[..., :-1, :] @ wq.astype(np.float64).T)
    k = _normalize(h[..., 1:, :] @ wk.astype(np.float64).T)
    return np.clip((1.0 - (q * k).sum(-1)) / 2.0, 0.0, 1.0)


def _away_from_ties(rng, h, wq, wk):
    """Redraw tokens until no adjacent pair gives a probability within TIE_GAP of 0.5,
    so that every correct float32 implementation takes the same decisions."""
    for _ in range(1000):
        p = adjacent_boundary_prob(h, wq, wk)
        close = np.abs(p - 0.5) < TIE_GAP
        if not close.any():
            return h
        idx = np.argwhere(close)
        for j in idx:
            j = tuple(j[:-1]) + (j[-1] + 1,)
            h[j] = rng.normal(size=h.shape[-1]).astype(np.float32)
    raise RuntimeError("could not draw inputs away from ties")


def routing_inputs():
    """Router weights, a right-padded batch (3, 12, 8) with its mask, and a packed
    sequence (20, 8) with cu_seqlens."""
    rng = np.random.default_rng(SEED + 1)
    d = D_ROUTE
    wq = (np.eye(d) + 0.6 * rng.normal(size=(d, d)) / np.sqrt(d)).astype(np.float32)
    wk = (np.eye(d) + 0.6 * rng.normal(size=(d, d)) / np.sqrt(d)).astype(np.float32)
    L = max(ROUTE_LENGTHS)
    padded = rng.normal(size=(len(ROUTE_LENGTHS), L, d)).astype(np.float32)
    # a run of nearly repeated tokens in row 0, so that some pairs are very similar
    padded[0, 3:7] = padded[0, 3] + 0.05 * rng.normal(size=(4, d)).astype(np.float32)
    padded = _away_from_ties(rng, padded, wq, wk)
    packed = rng.normal(size=(PACKED_CU[-1], d)).astype(np.float32)
    packed = _away_from_ties(rng, packed[None], wq, wk)[0]
    return {
        "wq": wq,
        "wk": wk,
        "padded": padded,
        "mask": length_mask(ROUTE_LENGTHS, L),
        "packed": packed,
        "cu_seqlens": np.array(PACKED_CU, dtype=np.int64),
    }


CHUNK_LENGTHS = (10, 7, 4, 6)
CHUNK_PACKED_CU = (0, 5, 11, 16)


def _boundaries(rng, mask, rate):
    b = rng.random(mask.shape) < rate
    b[:, 0] = True
    return b & mask


def chunk_inputs(d=6):
    """A right-padded batch (4, 10, d) with boundary mask and validity mask (row 2: every
    valid token a boundary; row 3: only the first one), and a packed (16, d) sequence
    with boundaries at every sequence start."""
    rng = np.random.default_rng(SEED + 2)
    L = max(CHUNK_LENGTHS)
    mask = length_mask(CHUNK_LENGTHS, L)
    bmask = _boundaries(rng, mask, 0.4)
    bmask[2] = mask[2]
    bmask[3] = False
    bmask[3, 0] = True
    hidden = rng.normal(size=(len(CHUNK_LENGTHS), L, d)).astype(np.float32)
    T = CHUNK_PACKED_CU[-1]
    pmask = rng.random(T) < 0.4
    pmask[list(CHUNK_PACKED_CU[:-1])] = True
    packed = rng.normal(size=(T, d)).astype(np.float32)
    return {
        "hidden": hidden,
        "mask": mask,
        "boundary_mask": bmask,
        "packed": packed,
        "packed_boundary_mask": pmask,
        "cu_seqlens": np.array(CHUNK_PACKED_CU, dtype=np.int64),
    }


D_DECHUNK = 8
HEADDIM = 4


def dechunk_inputs():
    """Boundary masks and probabilities over tokens, and the chunk-level states a main
    network would return, for a right-padded batch and for packed sequences. The
    probabilities at boundaries are drawn in (0.05, 0.95), the first one included."""
    rng = np.random.default_rng(SEED + 3)
    c = chunk_inputs(D_DECHUNK)
    B, L = c["boundary_mask"].shape
    prob = rng.uniform(0.05, 0.95, size=(B, L)).astype(np.float32)
    counts = c["boundary_mask"].sum(-1)
    M = int(counts.max())
    chunks = rng.normal(size=(B, M, D_DECHUNK)).astype(np.float32)
    T = c["packed_boundary_mask"].shape[0]
    pprob = rng.uniform(0.05, 0.95, size=T).astype(np.float32)
    pchunks = rng.normal(size=(int(c["packed_boundary_mask"].sum()), D_DECHUNK)).astype(np.float32)
    starts = np.asarray(c["cu_seqlens"][:-1])
    cum = np.cumsum(c["packed_boundary_mask"])
    next_cu = np.concatenate([[0], cum[np.asarray(c["cu_seqlens"][1:]) - 1]]).astype(np.int64)
    assert (c["packed_boundary_mask"][starts]).all()
    return {
        "mask": c["mask"],
        "boundary_mask": c["boundary_mask"],
        "prob": prob,
        "chunks": chunks,
        "packed_boundary_mask": c["packed_boundary_mask"],
        "packed_prob": pprob,
        "packed_chunks": pchunks,
        "cu_seqlens": c["cu_seqlens"],
        "next_cu_seqlens": next_cu,
    }


def ratio_inputs():
    """Router outputs for the ratio loss: random probabilities and decisions, and a
    batch where exactly 1/3 of the tokens are boundaries and the mean probability is 1/3."""
    rng = np.random.default_rng(SEED + 4)
    p = rng.random((3, 16)).astype(np.float32)
    bmask = rng.random((3, 16)) < 0.3
    bal_mask = np.zeros((2, 12), dtype=bool)
    for row in range(2):
        bal_mask[row, rng.choice(12, size=4, replace=False)] = True
    bal_p = rng.uniform(0.0, 2.0 / 3.0, size=(2, 12))
    bal_p = (bal_p * ((1.0 / 3.0) / bal_p.mean())).astype(np.float32)
    return {"p": p, "mask": bmask, "balanced_p": bal_p, "balanced_mask": bal_mask}


RATIO_N = (2.0, 3.0, 2.5, 6.0)


def ste_inputs():
    rng = np.random.default_rng(SEED + 5)
    return {
        "p": rng.uniform(0.5, 1.0, size=(2, 7, 1)).astype(np.float32),
        "out": rng.normal(size=(2, 7, 4)).astype(np.float32),
        "w": rng.normal(size=(2, 7, 4)).astype(np.float32),
    }


def pipeline_inputs():
    """One dynamic-chunking layer end to end: router weights, a right-padded batch and
    the weights of the stand-in main network (a fixed linear map on the chunks)."""
    r = routing_inputs()
    rng = np.random.default_rng(SEED + 6)
    w_main = (rng.normal(size=(D_ROUTE, D_ROUTE)) / np.sqrt(D_ROUTE)).astype(np.float32)
    return {**r, "w_main": w_main, "w_out": rng.normal(size=r["padded"].shape).astype(np.float32)}
