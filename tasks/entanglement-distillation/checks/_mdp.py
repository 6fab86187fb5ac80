"""Helpers the checks share: the BBPSSW map written out independently of the code under
test, the state space regenerated from (F, m), transitions grouped so that the memory
that holds a distilled pair does not matter, and the exact value of a fixed policy.
"""

import itertools
import os
from collections import defaultdict

import numpy as np

SEED = int(os.environ.get("RCB_SEED", "0")) + 20260612  # as in cases/cases_distillation.py


def bbpssw(f1, f2):
    """Output fidelity and success probability of one BBPSSW round on two Werner pairs
    (Bennett et al. 1996; the paper's distillation map)."""
    a, b = 1 - f1, 1 - f2
    success = f1 * f2 + (f1 * b + f2 * a) / 3 + 5 * a * b / 9
    return (f1 * f2 + a * b / 9) / success, success


def fixed_point_draws(seed, n=3):
    """The random case's (p, f0, delta): the same generator as the case."""
    rng = np.random.default_rng(seed)
    out = []
    for _ in range(n):
        p = float(rng.uniform(0.2, 0.95))
        f0 = float(rng.uniform(0.6, 0.9))
        fixed = (-3 + 6 * f0 + np.sqrt(7 - 26 * f0 + 28 * f0**2)) / (-2 + 8 * f0)
        delta = float(rng.uniform(0.5, 0.9) * (fixed - f0))
        out.append((p, f0, delta))
    return out


def states_of(F, m):
    """State ids as build_mdp numbers them: itertools.product over 0..F+1."""
    return list(itertools.product(range(F + 2), repeat=m))


def grouped_transitions(d):
    """{(state id, action index): {(sorted next state, reward, done): probability}}.

    Which memory of a distilled pair keeps the output is a convention; sorting the next
    state's memories makes the comparison independent of it (the MDP is symmetric under
    permutations of the memories)."""
    states = states_of(d["F"], d["m"])
    t = d["transitions"]
    out = defaultdict(lambda: defaultdict(float))
    for s, a, prob, ns, r, done in zip(t["s"], t["a"], t["prob"], t["ns"], t["reward"], t["done"]):
        key = (tuple(sorted(states[int(ns)])), float(r), bool(done))
        out[(int(s), int(a))][key] += float(prob)
    return out


def assert_grouped_close(actual, desired, where):
    assert sorted(actual) == sorted(desired), f"{where}: (state, action) pairs differ"
    for key in desired:
        a, d = actual[key], desired[key]
        assert sorted(a) == sorted(d), f"{where}: next states of {key} {sorted(a)} != {sorted(d)}"
        for nxt in d:
            # products of a few probabilities, in any order: a few ulps
            assert abs(a[nxt] - d[nxt]) <= 1e-12 + 1e-10 * abs(d[nxt]), (
                f"{where}: P{key}->{nxt} = {a[nxt]!r}, expected {d[nxt]!r}"
            )


def q_values(d, V):
    """{(state id, action index): expected reward + value of the next state}."""
    q = defaultdict(float)
    t = d["transitions"]
    for s, a, prob, ns, r, done in zip(t["s"], t["a"], t["prob"], t["ns"], t["reward"], t["done"]):
        q[(int(s), int(a))] += float(prob) * (float(r) + (0.0 if done else float(V[int(ns)])))
    return q


def policy_value(d, policy):
    """The exact value of a fixed policy: solve (I - P_pi) V = r_pi on the non-target states."""
    states = states_of(d["F"], d["m"])
    n = len(states)
    A = np.eye(n)
    b = np.zeros(n)
    t = d["transitions"]
    chosen = np.asarray(policy)
    for s, a, prob, ns, r, done in zip(t["s"], t["a"], t["prob"], t["ns"], t["reward"], t["done"]):
        s = int(s)
        if d["TARGET"] in states[s] or int(a) != int(chosen[s]):
            continue
        b[s] += float(prob) * float(r)
        if not done:
            A[s, int(ns)] -= float(prob)
    return np.linalg.solve(A, b)
