"""Seeded inputs for the GEPA cases and checks.

The cases and the checks both import this file (inputs/ is on the path in both
sandboxes): the checks regenerate every input from the same seeds instead of
reading it back from what the cases returned. RCB_SEED (set alike in both
sandboxes; 0 when grading) varies every random input; rcb validate runs several
seeds.
"""

import os

import numpy as np

SEED = 1000 * int(os.environ.get("RCB_SEED", "0"))
COMPONENTS = ("system", "extract", "answer")

# A hand-made family of candidates (component -> text), parents and aggregate scores:
#   0 seed; 1, 2 children of 0; 3 child of 1; 4 child of 2; 5 merges 3 and 4; 6 child of 0
HAND_CANDIDATES = [
    {"system": "s0", "extract": "e0", "answer": "a0"},
    {"system": "s1", "extract": "e0", "answer": "a0"},
    {"system": "s0", "extract": "e2", "answer": "a0"},
    {"system": "s1", "extract": "e0", "answer": "a3"},
    {"system": "s0", "extract": "e2", "answer": "a4"},
    {"system": "s1", "extract": "e2", "answer": "a3"},
    {"system": "s0", "extract": "e0", "answer": "a6"},
]
HAND_PARENTS = [[None], [0], [0], [1], [2], [3, 4], [0]]
HAND_SCORES = [0.30, 0.40, 0.45, 0.55, 0.50, 0.60, 0.35]


def score_matrix(seed, programs, instances, levels=(0.0, 0.5, 1.0)):
    """Per-program, per-instance scores drawn from a few levels (so instance fronts
    often hold several programs)."""
    rng = np.random.default_rng(seed)
    return rng.choice(levels, size=(programs, instances)).tolist()


def fronts_of(matrix):
    """Instance-wise Pareto fronts: for each instance, the programs with the best score."""
    scores = np.asarray(matrix)
    best = scores.max(axis=0)
    return {i: {k for k in range(scores.shape[0]) if scores[k, i] == best[i]} for i in range(scores.shape[1])}


def distinct_scores(seed, programs):
    rng = np.random.default_rng(seed)
    return [float(x) for x in rng.permutation(programs) / programs + rng.uniform(0.0, 0.5 / programs, programs)]


def genealogy(seed, n=16):
    """Candidates grown by mutating one or two components of a parent, sometimes by
    combining two parents; distinct aggregate scores that tend to rise."""
    rng = np.random.default_rng(seed)
    candidates = [{c: f"{c}-0" for c in COMPONENTS}]
    parents = [[None]]
    scores = [float(rng.uniform(0.1, 0.2))]
    version = 0
    for k in range(1, n):
        if k >= 4 and rng.random() < 0.2:
            p1, p2 = (int(x) for x in rng.choice(k, size=2, replace=False))
            child = {c: (candidates[p1] if rng.random() < 0.5 else candidates[p2])[c] for c in COMPONENTS}
            parent = [p1, p2]
            base = max(scores[p1], scores[p2])
        else:
            p = int(rng.integers(0, k))
            child = dict(candidates[p])
            for c in rng.choice(COMPONENTS, size=int(rng.integers(1, 3)), replace=False):
                version += 1
                child[str(c)] = f"{c}-{version}"
            parent = [p]
            base = scores[p]
        candidates.append(child)
        parents.append(parent)
        scores.append(float(base + rng.uniform(-0.03, 0.12)))
    return candidates, parents, scores


def ancestors(parents, node):
    found = set()
    stack = [node]
    while stack:
        for p in parents[stack.pop()]:
            if p is not None and p not in found:
                found.add(p)
                stack.append(p)
    return found
