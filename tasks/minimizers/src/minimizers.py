"""(w, k)-minimizer schemes and their density.

Sequences are integer arrays over the alphabet {0, ..., sigma - 1}. A k-mer is
identified by its code: the base-sigma number it spells, first character most
significant. An order on k-mers is an array `order` of length sigma**k with
order[code] the rank of the k-mer (smaller rank = smaller k-mer).
"""

from __future__ import annotations

import itertools

import numpy as np
from numpy.lib.stride_tricks import sliding_window_view


def kmer_codes(seq: np.ndarray, k: int, sigma: int) -> np.ndarray:
    """Codes of all k-mers along the last axis: shape (..., L - k + 1) for input (..., L)."""
    seq = np.asarray(seq, dtype=np.int64)
    n = seq.shape[-1] - k + 1
    # <paper2code name="kmer codes">
    codes = np.zeros(seq.shape[:-1] + (n,), dtype=np.int64)
    for j in range(k):
        codes = codes * sigma + seq[..., j : j + n]
    return codes
    # </paper2code name="kmer codes">


def random_order(sigma: int, k: int, rng: np.random.Generator) -> np.ndarray:
    """A uniformly random order on the sigma**k k-mers (the random minimizer)."""
    # <paper2code name="random order">
    return rng.permutation(sigma**k)
    # </paper2code name="random order">


def minimizer_positions(seq: np.ndarray, w: int, k: int, order: np.ndarray, sigma: int) -> np.ndarray:
    """For every window of w consecutive k-mers (window i holds k-mers i, ..., i + w - 1),
    the start position in seq of its minimizer: the k-mer of smallest rank, leftmost on ties."""
    # <paper2code name="window minimizers">
    ranks = order[kmer_codes(seq, k, sigma)]
    windows = sliding_window_view(ranks, w)
    return np.arange(windows.shape[0]) + np.argmin(windows, axis=1)
    # </paper2code name="window minimizers">


def particular_density(seq: np.ndarray, w: int, k: int, order: np.ndarray, sigma: int) -> float:
    """Number of distinct selected k-mer positions divided by the number of k-mers in seq."""
    # <paper2code name="particular density">
    selected = np.unique(minimizer_positions(seq, w, k, order, sigma))
    return len(selected) / (len(seq) - k + 1)
    # </paper2code name="particular density">


def de_bruijn(sigma: int, n: int) -> np.ndarray:
    """The lexicographically least de Bruijn sequence of order n over sigma letters
    (length sigma**n; read cyclically it contains every n-mer exactly once)."""
    # <paper2code name="de bruijn sequence">
    a = [0] * (n + 1)
    out: list[int] = []

    def extend(t: int, p: int) -> None:
        if t > n:
            if n % p == 0:
                out.extend(a[1 : p + 1])
        else:
            a[t] = a[t - p]
            extend(t + 1, p)
            for j in range(a[t - p] + 1, sigma):
                a[t] = j
                extend(t + 1, t)

    extend(1, 1)
    return np.array(out, dtype=np.int64)
    # </paper2code name="de bruijn sequence">


def charged_contexts(contexts: np.ndarray, w: int, k: int, order: np.ndarray, sigma: int) -> np.ndarray:
    """For contexts of length w + k (shape (C, w + k)): whether each is charged, i.e.
    the minimizer of its second window (k-mers 1..w) is a different k-mer
    position than the minimizer of its first window (k-mers 0..w-1)."""
    # <paper2code name="charged contexts">
    ranks = order[kmer_codes(contexts, k, sigma)]
    first = np.argmin(ranks[:, :w], axis=1)
    second = 1 + np.argmin(ranks[:, 1:], axis=1)
    return first != second
    # </paper2code name="charged contexts">


def exact_density(w: int, k: int, order: np.ndarray, sigma: int) -> float:
    """Density of the scheme: the fraction of charged contexts among all sigma**(w + k) contexts."""
    # <paper2code name="exact density">
    length = w + k
    codes = np.arange(sigma**length)[:, None]
    contexts = codes // sigma ** np.arange(length - 1, -1, -1) % sigma
    return float(np.mean(charged_contexts(contexts, w, k, order, sigma)))
    # </paper2code name="exact density">


def density_lower_bound(w: int, k: int) -> float:
    """Lower bound ceil((w + k) / w) / (w + k) on the density of any forward scheme."""
    # <paper2code name="density lower bound">
    return -(-(w + k) // w) / (w + k)
    # </paper2code name="density lower bound">


def random_minimizer_density(w: int) -> float:
    """Expected density of a random minimizer when no k-mer repeats within a context."""
    # <paper2code name="random minimizer density">
    return 2.0 / (w + 1)
    # </paper2code name="random minimizer density">


def best_order(w: int, k: int, sigma: int) -> tuple[float, np.ndarray]:
    """Exhaustive search over all orders on the sigma**k k-mers: the minimum density and an order achieving it
    (the first one found in itertools.permutations order)."""
    # <paper2code name="exhaustive minimum density">
    best, best_perm = 2.0, None
    for perm in itertools.permutations(range(sigma**k)):
        order = np.array(perm)
        d = exact_density(w, k, order, sigma)
        if d < best:
            best, best_perm = d, order
    return best, best_perm
    # </paper2code name="exhaustive minimum density">
