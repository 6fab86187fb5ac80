"""Independent counts for the checks: the Vietoris-Rips complex of points on a line,
its f-vector and its facets, and the h-vector from its defining polynomial identity.

On a line the Rips filtration value of a simplex is its diameter (largest minus smallest
position), so the complex at scale t (capped by max_edge_length) holds every set of at
most max_dimension + 1 positions whose diameter is at most that scale. Positions are
integers, so every comparison here is exact.
"""

import itertools
import math

import numpy as np


def rips_simplices(points, max_edge_length, max_dimension):
    """{frozenset of point indices: filtration value} of the truncated Rips complex."""
    pts = list(points)
    order = sorted(range(len(pts)), key=lambda i: pts[i])
    out = {}
    for a, i in enumerate(order):
        out[frozenset([i])] = 0.0
        near = [j for j in order[a + 1 :] if pts[j] - pts[i] <= max_edge_length]
        for size in range(1, max_dimension + 1):
            for rest in itertools.combinations(near, size):
                out[frozenset((i,) + rest)] = float(max(pts[j] for j in rest) - pts[i])
    return out


def f_vector(simplices, t, max_dimension):
    f = [0] * (max_dimension + 1)
    for s, filt in simplices.items():
        if filt <= t:
            f[len(s) - 1] += 1
    return f


def facet_counts(simplices, t, max_dimension, n_points):
    """Maximal simplices of the complex at t, counted by dimension."""
    present = {s for s, filt in simplices.items() if filt <= t}
    counts = [0] * (max_dimension + 1)
    for s in present:
        if len(s) <= max_dimension and any(
            (s | {v}) in present for v in range(n_points) if v not in s
        ):
            continue
        counts[len(s) - 1] += 1
    return counts


def h_vector(f, max_dimension):
    """h of a complex of dimension d - 1 (d - 1 the largest i with f_i > 0), from
    sum_k h_k x^(d-k) = sum_i f_(i-1) (x - 1)^(d-i) with f_(-1) = 1, padded with zeros
    to max_dimension + 2 entries."""
    d = max(i for i, v in enumerate(f) if v != 0) + 1
    lhs = np.zeros(d + 1, dtype=object)  # coefficients of x^0..x^d
    fm = [1] + list(f)
    for i in range(d + 1):
        for j in range(d - i + 1):  # (x - 1)^(d-i) = sum_j C(d-i, j) x^j (-1)^(d-i-j)
            lhs[j] += fm[i] * math.comb(d - i, j) * (-1) ** (d - i - j)
    h = [int(lhs[d - k]) for k in range(d + 1)]
    return h + [0] * (max_dimension + 2 - len(h))
