"""Top-nσ sampling (Tang et al., 2024) and the usual truncation samplers, in numpy.

Top-nσ keeps the tokens whose (temperature-scaled) logit lies within n standard
deviations of the largest logit, l_i ≥ max(l) − n·σ(l), and samples from the
softmax over that set. All functions act on the last axis, so a batch of logit
vectors can be processed at once; logits of −∞ mark tokens that are already
excluded.
"""

from __future__ import annotations

import numpy as np


def softmax(logits: np.ndarray) -> np.ndarray:
    z = logits - logits.max(axis=-1, keepdims=True)
    e = np.exp(z)
    return e / e.sum(axis=-1, keepdims=True)


def apply_temperature(logits: np.ndarray, temperature: float) -> np.ndarray:
    """l / T."""
    # <paper2code name="temperature scaling">
    scaled = logits / temperature
    # </paper2code name="temperature scaling">
    return scaled


def logit_statistics(logits: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Maximum M and standard deviation σ (population, ddof = 0) of the finite logits
    along the last axis, each with the last axis kept (size 1)."""
    # <paper2code name="logit statistics">
    finite = np.isfinite(logits)
    count = finite.sum(axis=-1, keepdims=True)
    M = np.max(np.where(finite, logits, -np.inf), axis=-1, keepdims=True)
    mean = np.sum(np.where(finite, logits, 0.0), axis=-1, keepdims=True) / count
    var = np.sum(np.where(finite, (logits - mean) ** 2, 0.0), axis=-1, keepdims=True) / count
    sigma = np.sqrt(var)
    # </paper2code name="logit statistics">
    return M, sigma


def top_nsigma_mask(logits: np.ndarray, n: float) -> np.ndarray:
    """Boolean mask of the kept tokens: l_i ≥ M − n σ."""
    M, sigma = logit_statistics(logits)
    # <paper2code name="top-nsigma mask">
    keep = logits >= M - n * sigma
    # </paper2code name="top-nsigma mask">
    return keep


def masked_softmax(logits: np.ndarray, keep: np.ndarray) -> np.ndarray:
    """Softmax over the kept tokens; the others get probability exactly 0."""
    # <paper2code name="masked softmax">
    z = np.where(keep, logits, -np.inf)
    z = z - z.max(axis=-1, keepdims=True)
    p = np.exp(z)
    p = p / p.sum(axis=-1, keepdims=True)
    # </paper2code name="masked softmax">
    return p


def top_nsigma_probs(logits: np.ndarray, n: float = 1.0, temperature: float = 1.0) -> np.ndarray:
    """The top-nσ sampling distribution: scale by the temperature, keep the tokens within
    nσ of the maximum of the scaled logits, renormalise."""
    # <paper2code name="top-nsigma distribution">
    scaled = apply_temperature(logits, temperature)
    keep = top_nsigma_mask(scaled, n)
    probs = masked_softmax(scaled, keep)
    # </paper2code name="top-nsigma distribution">
    return probs


def top_k_mask(logits: np.ndarray, k: int) -> np.ndarray:
    """Keep the k largest logits (ties with the k-th largest are kept too)."""
    # <paper2code name="top-k mask">
    kth = np.sort(logits, axis=-1)[..., -k]
    keep = logits >= kth[..., None]
    # </paper2code name="top-k mask">
    return keep


def top_p_mask(logits: np.ndarray, p: float) -> np.ndarray:
    """Nucleus: the smallest set of most probable tokens whose total probability reaches p."""
    # <paper2code name="top-p mask">
    probs = softmax(logits)
    order = np.argsort(-probs, axis=-1, kind="stable")
    sorted_probs = np.take_along_axis(probs, order, axis=-1)
    mass_before = np.cumsum(sorted_probs, axis=-1) - sorted_probs
    keep = np.zeros(logits.shape, dtype=bool)
    np.put_along_axis(keep, order, mass_before < p, axis=-1)
    # </paper2code name="top-p mask">
    return keep


def min_p_mask(logits: np.ndarray, p_base: float) -> np.ndarray:
    """Keep tokens whose probability is at least p_base times the largest probability."""
    # <paper2code name="min-p mask">
    probs = softmax(logits)
    keep = probs >= p_base * probs.max(axis=-1, keepdims=True)
    # </paper2code name="min-p mask">
    return keep


def sample_from_probs(probs: np.ndarray, u: float) -> int:
    """Inverse-CDF sampling from a 1-D distribution with a uniform number u ∈ [0, 1):
    the smallest index i with Σ_{j≤i} p_j > u · Σ_j p_j."""
    # <paper2code name="inverse-cdf sample">
    cdf = np.cumsum(probs)
    index = int(np.searchsorted(cdf, u * cdf[-1], side="right"))
    # </paper2code name="inverse-cdf sample">
    return index


def sample_next_token(
    logits: np.ndarray,
    u: float,
    method: str = "top_nsigma",
    temperature: float = 1.0,
    n: float = 1.0,
    k: int = 50,
    p: float = 0.9,
    p_base: float = 0.1,
) -> int:
    """One draw from a 1-D logit vector: scale by the temperature, truncate with the chosen
    method ("top_nsigma", "top_k", "top_p", "min_p" or "none"), renormalise, sample with u."""
    # <paper2code name="sampler pipeline">
    scaled = apply_temperature(logits, temperature)
    if method == "top_nsigma":
        keep = top_nsigma_mask(scaled, n)
    elif method == "top_k":
        keep = top_k_mask(scaled, k)
    elif method == "top_p":
        keep = top_p_mask(scaled, p)
    elif method == "min_p":
        keep = min_p_mask(scaled, p_base)
    elif method == "none":
        keep = np.isfinite(scaled)
    else:
        raise ValueError(f"unknown sampling method {method!r}")
    probs = masked_softmax(scaled, keep)
    token = sample_from_probs(probs, u)
    # </paper2code name="sampler pipeline">
    return token


def generate(
    next_logits: np.ndarray, start: int, steps: int, uniforms: np.ndarray, n: float = 1.0, temperature: float = 1.0
) -> list[int]:
    """Sample a token sequence from a bigram table of logits (next_logits[prev] are the
    logits of the next token) with top-nσ; uniforms[i] drives the i-th draw."""
    tokens = [start]
    # <paper2code name="generation loop">
    for step in range(steps):
        probs = top_nsigma_probs(next_logits[tokens[-1]], n, temperature)
        tokens.append(sample_from_probs(probs, uniforms[step]))
    # </paper2code name="generation loop">
    return tokens
