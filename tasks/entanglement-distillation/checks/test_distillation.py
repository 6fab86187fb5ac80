"""Checks for the entanglement-distillation MDP over the cases' outputs: the BBPSSW
closure of the fidelity levels, the closed-form count of actions, the availability
rule, hand-worked transitions, the exact value of the returned policy, the authors'
published waiting times, and the outputs compared with the reference's.

Tolerances:
- fidelity levels and transition probabilities come from the same few floating-point
  operations in any correct implementation: 1e-12 (a few ulps, any order);
- values come from value iteration stopped when a sweep changes no value by more than
  theta = 1e-6; the fixed point it approaches is 1e-5 to 4e-5 away on these MDPs (the
  exact solution, Gauss-Seidel and Jacobi sweeps differ by that much), so values and
  waiting times compare to 2e-4 (+ 1e-5 relative).

Which memory keeps a distilled pair, and how actions are numbered, are conventions a
correct implementation may choose differently: transitions are compared after sorting
the memories of the next state (the MDP is symmetric under permuting memories), values
state by state (they are symmetric too), and a policy by its exact value, never action
by action (ties between equally good actions may break either way).
"""

from math import comb, factorial

import numpy as np
import pytest
from _mdp import (
    SEED,
    assert_grouped_close,
    bbpssw,
    fixed_point_draws,
    grouped_transitions,
    policy_value,
    q_values,
    states_of,
)

LEVEL_PARAMS = [
    (0.75, 0.04), (0.62, 0.04), (0.7, 0.03), (0.9, 0.042), (0.6, 0.047),
    (0.62, 0.054), (0.65, 0.064), (0.55, 0.024), (0.85, 0.058),
]  # fmt: skip
MDP_CASES = [
    "mdp_two_memories",
    "mdp_three_memories",
    "mdp_three_memories_four_levels",
    "mdp_four_memories",
]
VALUE = {"atol": 2e-4, "rtol": 1e-5}

# The authors' data/results/Topt_vs_m.json (f0 = 0.75, delta = 0.04), m <= 4: (p, m) -> T_opt
PUBLISHED_TOPT = {
    (0.3, 2): 17.77285707754583,
    (0.3, 3): 11.016716991683332,
    (0.3, 4): 8.609744998723103,
    (0.6, 2): 10.718410572314156,
    (0.6, 3): 7.3832131133562084,
    (0.6, 4): 6.1612502488824035,
    (0.9, 2): 8.223855092492045,
    (0.9, 3): 6.391556320626579,
    (0.9, 4): 5.34703210973062,
}
# The authors' data/results/advantage_grid.json (m = 4, delta = 0.04): (p, f0) -> row
PUBLISHED_GRID = {
    (0.3, 0.62): {"F": 3, "T_opt": 20.864551384299723, "T_pumping": 23.044328061259503, "T_nested": 20.86455962949192, "T_greedy": 22.415085998137705},
    (0.5, 0.9): {"F": 3, "T_opt": 7.13908004507638, "T_pumping": 7.807119011331038, "T_nested": 7.714065463312956, "T_greedy": 7.6258229108480196},
    (0.7, 0.9): {"F": 3, "T_opt": 5.742774304459937, "T_pumping": 7.169119837519403, "T_nested": 6.405158482105278, "T_greedy": 6.457698314653712},
    (0.9, 0.8): {"F": 2, "T_opt": 4.767974815032646, "T_pumping": 4.861338643628488, "T_nested": 7.162426356127728, "T_greedy": 5.768625017523082},
    (0.5, 0.65): {"F": 2, "T_opt": 8.397029106164823, "T_pumping": 8.397031203130933, "T_nested": 14.905458053163391, "T_greedy": 9.804761609655802},
}  # fmt: skip


def mdp_outputs(outputs, reference):
    """(name, this attempt's MDP, the reference's MDP) for every MDP the cases built."""
    pairs = [(name, outputs[name], reference[name]) for name in MDP_CASES]
    for index, (mine, ref) in enumerate(zip(outputs["random_parameters"], reference["random_parameters"])):
        pairs.append((f"random_parameters[{index}]", mine, ref))
    assert len(outputs["random_parameters"]) == len(reference["random_parameters"])
    return pairs


def assert_is_closure(f, f0, ft, where):
    """f is the smallest set holding f0 and closed under BBPSSW below the target."""
    f = np.asarray(f, dtype=float)
    assert f[0] == f0, f"{where}: the lowest level {f[0]!r} is not f0 = {f0!r}"
    assert np.all(np.diff(f) > 0), f"{where}: levels not distinct and increasing: {f}"
    assert np.all(f < ft), f"{where}: a level reaches the target {ft}: {f}"
    made = {0}
    for i, a in enumerate(f):
        for j, b in enumerate(f[i:], start=i):
            out = bbpssw(a, b)[0]
            if out >= ft:
                continue
            gap = np.abs(f - out)
            k = int(np.argmin(gap))
            assert gap[k] <= 1e-12, f"{where}: D({a}, {b}) = {out} < fT is not a level"
            made.add(k)
    assert made == set(range(len(f))), f"{where}: levels {sorted(set(range(len(f))) - made)} are never produced"


# ---- the reachable fidelity levels ---------------------------------------------------


def test_levels_are_the_bbpssw_closure(outputs):
    for (f0, delta), out in zip(LEVEL_PARAMS, outputs["fidelity_levels"], strict=True):
        assert_is_closure(out["f"], f0, f0 + delta, f"f0={f0}, delta={delta}")
        assert out["F"] == len(out["f"]) and out["TARGET"] == out["F"] + 1


def test_levels_match_reference(outputs, reference):
    for (f0, delta), out, ref in zip(LEVEL_PARAMS, outputs["fidelity_levels"], reference["fidelity_levels"], strict=True):
        assert out["F"] == ref["F"], f"f0={f0}, delta={delta}: {out['F']} levels, expected {ref['F']}"
        np.testing.assert_allclose(out["f"], ref["f"], rtol=1e-12, atol=0, err_msg=f"f0={f0}")


def test_pumping_fixed_point(outputs, reference):
    fixed = np.asarray(outputs["pumping_fixed_point"], dtype=float)
    for f0, value in zip(np.linspace(0.55, 0.95, 9), fixed, strict=True):
        # F_inf = D(F_inf, f0): pumping f0 pairs onto F_inf leaves it unchanged
        assert abs(bbpssw(value, f0)[0] - value) <= 1e-12, f"f0={f0}: D({value}, f0) != {value}"
        assert f0 < value <= 1.0, f"f0={f0}: fixed point {value} is not above f0"
    np.testing.assert_allclose(fixed, reference["pumping_fixed_point"], rtol=1e-12, atol=0)


# ---- the action space ------------------------------------------------------------------


def count_actions(m):
    """Partial matchings with k pairs, times generation patterns on the other memories."""
    total = 0
    for k in range(m // 2 + 1):
        matchings = comb(m, 2 * k) * factorial(2 * k) // (factorial(k) * 2**k)
        total += matchings * 2 ** (m - 2 * k)
    return total


def test_action_space_closed_form(outputs):
    for out in outputs["action_spaces"]:
        m = out["m"]
        assert out["nA"] == count_actions(m), f"m={m}: {out['nA']} actions, expected {count_actions(m)}"
        assert out["n_unique"] == out["nA"], f"m={m}: actions repeat"
        assert out["idle"] == [[0] * m, []], f"m={m}: the idle action is {out['idle']}"
        for g, pairs in out["actions"]:
            used = [i for pair in pairs for i in pair]
            assert len(used) == len(set(used)), f"m={m}: pairs {pairs} share a memory"
            assert all(0 <= i < m for i in used) and all(x in (0, 1) for x in g)
            assert not any(g[i] for i in used), f"m={m}: generation on a distilled memory: {g}, {pairs}"


def test_action_space_matches_reference(outputs, reference):
    for out, ref in zip(outputs["action_spaces"], reference["action_spaces"], strict=True):
        assert out["actions"] == ref["actions"], f"m={out['m']}: the action sets differ"


# ---- availability ----------------------------------------------------------------------


def allowed(state, action, target):
    g, pairs = action
    if target in state:
        return not any(g) and not pairs
    if any(state[i] in (0, target) or state[j] in (0, target) for i, j in pairs):
        return False
    return not any(g[i] and state[i] != 0 for i in range(len(state)))


def test_available_actions_rule(outputs, reference):
    for name, out, _ in mdp_outputs(outputs, reference):
        states = states_of(out["F"], out["m"])
        assert len(out["available"]) == len(states), f"{name}: {len(out['available'])} states"
        for s, acts in zip(states, out["available"]):
            expected = [k for k, a in enumerate(out["actions"]) if allowed(s, a, out["TARGET"])]
            assert list(acts) == expected, f"{name}: state {s} allows {acts}, expected {expected}"


def test_available_actions_match_reference(outputs, reference):
    for name, out, ref in mdp_outputs(outputs, reference):
        assert out["actions"] == ref["actions"], f"{name}: the action sets differ"
        assert out["available"] == ref["available"], f"{name}: the available actions differ"


# ---- transitions -----------------------------------------------------------------------


def test_transitions_are_distributions(outputs, reference):
    for name, out, _ in mdp_outputs(outputs, reference):
        states = states_of(out["F"], out["m"])
        target = out["TARGET"]
        grouped = grouped_transitions(out)
        expected_keys = {(s, a) for s, acts in enumerate(out["available"]) for a in acts}
        assert set(grouped) == expected_keys, f"{name}: transitions for other (state, action) pairs than the available ones"
        for (s, a), nxt in grouped.items():
            total = sum(nxt.values())
            assert abs(total - 1.0) <= 1e-12, f"{name}: P(.|{states[s]}, {out['actions'][a]}) sums to {total}"
            distill = bool(out["actions"][a][1])
            for (ns, r, done), prob in nxt.items():
                assert prob > 0
                assert done == (target in ns), f"{name}: done={done} for next state {ns}"
                if target in states[s]:
                    assert (ns, r, done) == (tuple(sorted(states[s])), 0.0, True), f"{name}: target state {states[s]} is not absorbing"
                else:
                    assert r == (0.0 if done else -2.0 if distill else -1.0), f"{name}: reward {r} for {states[s]} -> {ns}"


def test_transitions_match_reference(outputs, reference):
    for name, out, ref in mdp_outputs(outputs, reference):
        assert (out["F"], out["m"]) == (ref["F"], ref["m"]), f"{name}: F, m differ"
        assert_grouped_close(grouped_transitions(out), grouped_transitions(ref), name)


def test_two_memory_transitions_hand_computed(outputs):
    out = outputs["mdp_two_memories"]  # p = 0.7, f0 = 0.75, fT = 0.79
    p, f0, ft = 0.7, 0.75, 0.79
    f1, s1 = bbpssw(f0, f0)  # 0.7787 < fT: the second level
    f2, s2 = bbpssw(f1, f0)  # >= fT: the target
    assert out["F"] == 2 and f1 < ft <= f2
    np.testing.assert_allclose(out["f"], [f0, f1], rtol=1e-12)
    grouped = grouped_transitions(out)
    states = states_of(2, 2)
    index = {tuple(a[0]) + tuple(map(tuple, a[1])): k for k, a in enumerate(out["actions"])}

    def dist(state, g, pairs=()):
        return dict(grouped[(states.index(state), index[g + tuple(pairs)])])

    # generate on both empty memories
    want = {((0, 0), -1.0, False): (1 - p) ** 2, ((0, 1), -1.0, False): 2 * p * (1 - p), ((1, 1), -1.0, False): p * p}
    got = dist((0, 0), (1, 1))
    assert sorted(got) == sorted(want) and all(abs(got[k] - want[k]) < 1e-12 for k in want), got
    # distill two f0 pairs: success leaves one pair at the second level, failure frees both
    want = {((0, 2), -2.0, False): s1, ((0, 0), -2.0, False): 1 - s1}
    got = dist((1, 1), (0, 0), [(0, 1)])
    assert sorted(got) == sorted(want) and all(abs(got[k] - want[k]) < 1e-12 for k in want), got
    # pump an f0 pair onto the second level: success reaches the target (reward 0)
    want = {((0, 3), 0.0, True): s2, ((0, 0), -2.0, False): 1 - s2}
    got = dist((2, 1), (0, 0), [(0, 1)])
    assert sorted(got) == sorted(want) and all(abs(got[k] - want[k]) < 1e-12 for k in want), got
    # keep a pair and generate on the other memory
    want = {((0, 2), -1.0, False): 1 - p, ((1, 2), -1.0, False): p}
    got = dist((2, 0), (0, 1))
    assert sorted(got) == sorted(want) and all(abs(got[k] - want[k]) < 1e-12 for k in want), got


# ---- values and policies ---------------------------------------------------------------


def test_values_match_reference(outputs, reference):
    for name, out, ref in mdp_outputs(outputs, reference):
        np.testing.assert_allclose(out["V"], ref["V"], **VALUE, err_msg=name)
        np.testing.assert_allclose(out["T_opt"], ref["T_opt"], **VALUE, err_msg=name)


def test_policy_is_optimal(outputs, reference):
    for name, out, ref in mdp_outputs(outputs, reference):
        V = np.asarray(out["V"], dtype=float)
        exact = policy_value(out, out["policy"])
        # the returned policy achieves the returned values, and the reference's optimum
        np.testing.assert_allclose(exact, V, **VALUE, err_msg=f"{name}: the policy's exact value")
        np.testing.assert_allclose(exact, ref["V"], **VALUE, err_msg=f"{name}: against the reference")
        q = q_values(out, V)
        for s, acts in enumerate(out["available"]):
            best = max(q[(s, a)] for a in acts)
            assert int(out["policy"][s]) in acts, f"{name}: state {s} takes an unavailable action"
            assert q[(s, int(out["policy"][s]))] >= best - 1e-4, f"{name}: state {s} is not greedy"
        init = states_of(out["F"], out["m"]).index((0,) * out["m"])
        np.testing.assert_allclose(out["T_opt"], -V[init], rtol=1e-12, err_msg=name)


def test_topt_matches_published(outputs):
    rows = outputs["topt_vs_m"]
    assert [(r["p"], r["m"]) for r in rows] == list(PUBLISHED_TOPT)
    for r in rows:
        np.testing.assert_allclose(r["T_opt"], PUBLISHED_TOPT[(r["p"], r["m"])], **VALUE, err_msg=str(r))
    # the waiting time falls with more memories and with faster generation (the paper's claim)
    for p in (0.3, 0.6, 0.9):
        times = [r["T_opt"] for r in rows if r["p"] == p]
        assert times == sorted(times, reverse=True), f"p={p}: T_opt does not fall with m: {times}"
    for m in (2, 3, 4):
        times = [r["T_opt"] for r in rows if r["m"] == m]
        assert times == sorted(times, reverse=True), f"m={m}: T_opt does not fall with p: {times}"


def test_baselines_match_published(outputs):
    rows = outputs["baselines_grid"]
    assert [(r["p"], r["f0"]) for r in rows] == list(PUBLISHED_GRID)
    for r in rows:
        want = PUBLISHED_GRID[(r["p"], r["f0"])]
        assert r["F"] == want["F"], f"{r}: F"
        for key in r:
            if key.startswith("T_"):
                np.testing.assert_allclose(r[key], want[key], **VALUE, err_msg=f"{r['p'], r['f0']} {key}")


def test_optimal_beats_baselines(outputs):
    rows = list(outputs["baselines_grid"])
    rows += [{"T_opt": d["T_opt"], **{f"T_{k}": v for k, v in d["baselines"].items()}} for d in outputs["random_parameters"]]
    for r in rows:
        for key, value in r.items():
            if key.startswith("T_") and key != "T_opt":
                assert r["T_opt"] <= value + 2e-4, f"T_opt = {r['T_opt']} above {key} = {value}"


# ---- random parameters -----------------------------------------------------------------


@pytest.mark.parametrize("index", range(3))
def test_random_parameters(outputs, reference, index):
    p, f0, delta = fixed_point_draws(SEED)[index]
    out, ref = outputs["random_parameters"][index], reference["random_parameters"][index]
    assert out["m"] == 3
    assert_is_closure(out["f"], f0, f0 + delta, f"draw {index}")
    np.testing.assert_allclose(out["f"], ref["f"], rtol=1e-12, atol=0)
    for name in ("pumping", "nested", "greedy"):
        mine, theirs = out["baselines"][name], ref["baselines"][name]
        if np.isinf(theirs):
            assert np.isinf(mine), f"{name}: {mine}, the reference deadlocks"
        else:
            np.testing.assert_allclose(mine, theirs, **VALUE, err_msg=name)
    # generation from the empty state with every memory flagged: binomial in p
    grouped = grouped_transitions(out)
    gen_all = [k for k, a in enumerate(out["actions"]) if a == [[1, 1, 1], []]][0]
    got = grouped[(0, gen_all)]
    for n_ok in range(4):
        key = (tuple([0] * (3 - n_ok) + [1] * n_ok), -1.0, False)
        assert abs(got[key] - comb(3, n_ok) * p**n_ok * (1 - p) ** (3 - n_ok)) < 1e-12, (key, got)
