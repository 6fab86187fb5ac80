"""Checks for ShinkaEvolve's parent sampling and bandit LLM selection.

Closed forms come from the paper (weighted parent sampling as
sigmoid-scaled fitness times the offspring penalty; UCB1 over asymmetric, exponentially
transformed improvements with epsilon for the non-maximal arms) and are re-derived here
from the seeded inputs; everything else is compared with the reference's outputs under
`RTOL`/`ATOL` (see _shinka_checks.py). Draws are compared id by id with the reference:
the draw itself is the visible `np.random.choice(..., p=...)` call on a seeded global
state, so equal probabilities give equal draws.
"""

import math

import numpy as np
from _shinka_checks import (
    assert_close,
    counts_match,
    ucb_exp_probs,
    weighted_probs,
)
from _shinka_inputs import archive_spec, hand_spec

# ------------------------------------------------------------------ weighted


def _check_weighted(out, ref, key, rows, island, lam):
    ids, probs = weighted_probs(rows, island, lam)
    assert_close(out[key]["probs"], probs, where=f"{key} probs")
    assert_close(out[key]["probs"], ref[key]["probs"], where=f"{key} probs (reference)")
    counts_match(out[key]["ids"], ids, probs)
    assert out[key]["ids"] == ref[key]["ids"], f"{key}: draws differ"


def test_weighted_hand(outputs, reference):
    out, ref = outputs["weighted_hand"], reference["weighted_hand"]
    rows = hand_spec()
    _check_weighted(out, ref, "i0_l10", rows, 0, 10.0)
    _check_weighted(out, ref, "all_l1", rows, None, 1.0)
    # equal scores: the sigmoid is 1/2 everywhere, only the offspring penalty is left
    # (children a:0 b:3 c:1 d:0 e:0 -> weights 1, 1/4, 1/2, 1, 1)
    assert_close(out["flat"]["probs"], np.array([1, 0.25, 0.5, 1, 1]) / 3.75)
    # all but e at the median; MAD = 0 so e's sigmoid saturates at 1
    assert_close(out["tied"]["probs"], np.array([0.5, 0.125, 0.25, 0.5, 1.0]) / 2.375)
    _check_weighted(out, ref, "flat", [dict(r, combined_score=0.4) for r in rows], 0, 10.0)
    tiny = [dict(r, combined_score=(1.0 if r["id"] != "e" else 1.0 + 1e-7)) for r in rows]
    _check_weighted(out, ref, "tiny", tiny, 0, 2.0)
    # a and b (0.2, 0.9) with four children each: median 0.55, MAD 0.35, so the
    # sigmoid arguments are +-2 and the weights sum to 0.2 (< 1); the probabilities are
    # sigmoid(-2) and sigmoid(2), which add up to one
    few = [dict(r, children_count=4) for r in rows if r["id"] in ("a", "b")]
    assert_close(out["few"]["probs"], [1 / (1 + math.exp(2.0)), 1 / (1 + math.exp(-2.0))])
    _check_weighted(out, ref, "few", few, 0, 2.0)


def test_weighted_random(outputs, reference):
    out, ref = outputs["weighted_random"], reference["weighted_random"]
    for j, (island, lam) in enumerate([(None, 10.0), (0, 1.0), (1, 25.0), (None, 0.3)]):
        rows = archive_spec(20 + j, n_programs=10 + 2 * j)
        _check_weighted(out, ref, f"i{island}_l{lam}", rows, island, lam)
    # scale-free: 1000 * score - 7 gives the same probabilities
    assert_close(out["scaled"]["probs"], out["iNone_l10.0"]["probs"], rtol=1e-7)
    assert_close(out["scaled"]["probs"], ref["scaled"]["probs"], rtol=1e-7)


# ------------------------------------------------------------------ bandit


def test_bandit_update_hand(outputs, reference):
    out, ref = outputs["bandit_update_hand"], reference["bandit_update_hand"]
    # improvements over max(parent, baseline), floored at 0: 1.0 and 0.25 on arm 0,
    # 0 on arm 1 (parent 0 is below the baseline 1), 0 for the failed job on arm 2
    e = out["exp"]
    assert_close(e["s"], [math.log(math.e - 1 + math.expm1(0.25)), -np.inf, -np.inf], where="exp s")
    assert_close(e["divs"], [2.0, 1.0, 1.0])
    assert_close(e["n_completed"], [2.0, 1.0, 1.0])
    assert e["obs"][0] == -np.inf
    assert math.isclose(e["obs"][1], math.log(math.e - 1), rel_tol=1e-12)
    lin = out["linear"]
    assert_close(lin["s"], [1.25, 0.0, 0.0], where="linear s")
    assert_close(lin["divs"], [2.0, 1.0, 1.0])
    assert_close(lin["obs"], [0.0, 1.0])
    assert_close(out, ref, where="bandit_update_hand")


def test_bandit_update(outputs, reference):
    out, ref = outputs["bandit_update"], reference["bandit_update"]
    for name, trace in out.items():
        assert len(trace) == 14
        # each update adds one completed pull to the count of its arm
        assert_close([float(np.sum(step["n"])) for step in trace], np.arange(1.0, 15.0), where=name)
    assert_close(out, ref, where="bandit_update")


def test_normalized_means(outputs, reference):
    out, ref = outputs["normalized_means"], reference["normalized_means"]
    for name, v in out.items():
        assert_close(np.asarray(v["sub"]), np.asarray(v["all"])[[2, 0]], where=f"{name} subset")
    assert_close(out, ref, where="normalized_means")


def _check_probs(p, subset, n_arms):
    p = np.asarray(p, float)
    assert p.shape == (n_arms,)
    if subset:
        assert math.isclose(p.sum(), 1.0, rel_tol=1e-12)
        outside = [a for a in range(n_arms) if a not in subset]
        assert np.all(p[outside] == 0.0)
    else:
        assert np.all(p == 0.0)


def test_posterior(outputs, reference):
    out, ref = outputs["posterior"], reference["posterior"]
    assert_close(out["fresh"]["all"], [0.25] * 4)
    assert_close(out["fresh"]["sub"], [0, 0.5, 0, 0.5])
    for name, v in out.items():
        if name == "fresh":
            continue
        # arm 2 was never pulled in the short run: unseen arms are tried first
        assert_close(v["all"], [0.0, 0.0, 1.0], where=f"{name} all")
        assert_close(v["sub_unseen"], [0.0, 0.0, 1.0], where=f"{name} sub_unseen")
        _check_probs(v["sub"], [0, 1], 3)
        _check_probs(v["sub_empty"], [], 3)
        assert_close(v["one"], v["all"])
        eps = 0.1 if name == "no_adapt" else 0.2
        for key, subset in (("seen", [0, 1, 2, 3]), ("seen_sub", [3, 0, 1]), ("seen_named", [1, 2])):
            p = np.asarray(v[key])
            _check_probs(p, subset, 4)
            ps = p[subset]
            top = np.isclose(ps, ps.max(), rtol=1e-12)
            if top.all():  # every arm tied: uniform
                assert_close(ps, np.full(len(subset), 1 / len(subset)), where=f"{name} {key}")
            else:  # the maximal arms share 1 - eps, the others share eps
                assert_close(ps[top], np.full(top.sum(), (1 - eps) / top.sum()), where=f"{name} {key}")
                assert_close(ps[~top], np.full((~top).sum(), eps / (~top).sum()), where=f"{name} {key}")
        counts = np.bincount(v["picks"], minlength=4) / len(v["picks"])
        assert np.all(np.abs(counts - np.asarray(v["seen"])) <= 5 * np.sqrt(0.25 / len(v["picks"])) + 1e-9)
    assert_close(out, ref, where="posterior")
    for name in out:
        if name != "fresh":
            assert out[name]["picks"] == ref[name]["picks"], f"{name}: draws differ"


def test_posterior_cost(outputs, reference):
    out, ref = outputs["posterior_cost"], reference["posterior_cost"]
    for key, v in out.items():
        _check_probs(v["all"], [0, 1, 2], 3)
        _check_probs(v["sub"], [1, 2], 3)
    assert_close(out, ref, where="posterior_cost")


HAND_HISTORY = [(0, 0.5), (1, 1.0), (0, 0.1), (2, 0.0), (1, -0.3)]


def test_ucb_hand(outputs, reference):
    out, ref = outputs["ucb_hand"], reference["ucb_hand"]
    assert_close(out["p"], ucb_exp_probs(HAND_HISTORY, 0.2, 0.3, 3), where="p")
    assert_close(out["p_explore"], ucb_exp_probs(HAND_HISTORY, 2.0, 0.3, 3), where="p_explore")
    for c, p in out["sweep"].items():
        assert_close(p, ucb_exp_probs(HAND_HISTORY, float(c), 0.3, 3), where=f"sweep c={c}")
    assert_close(out["tie"], [1 / 3] * 3)
    assert_close(out["once"], ucb_exp_probs([(0, 0.2), (1, 0.9), (2, 0.4)], 1.0, 0.2, 3), where="once")
    tie2 = [(0, 0.8), (1, 0.8), (2, 0.1), (0, 0.3), (1, 0.3), (2, 0.1)]
    assert_close(out["tie2"], ucb_exp_probs(tie2, 1.0, 0.3, 3), where="tie2")
    assert_close(out["tie2"], [0.35, 0.35, 0.3], where="tie2")
    assert_close(out["tie_sub"], [0.5, 0.0, 0.5])
    assert_close(out, ref, where="ucb_hand")


def test_normalized_means_state(outputs, reference):
    out, ref = outputs["normalized_means_state"], reference["normalized_means_state"]
    # exponential, asymmetric: mean of exp-contributions over the largest one seen
    m = np.array([0.3 - math.log(2), -1.2, 0.9 - math.log(3), -np.inf])
    assert_close(out["exp_asym"]["all"], np.exp(m - 0.4), where="exp_asym")
    # linear, asymmetric: min-max scaled over the observed range [0, 0.8]
    assert_close(out["linear_asym"]["all"], (np.array([0.3, 0.0, 1.4 / 3, 0.4]) - 0.0) / 0.8, where="linear_asym")
    assert_close(out["linear_sym"]["all"], (np.array([0.3, -0.9, 1.4 / 3, 0.4]) + 1.0) / 1.8, where="linear_sym")
    # exponential, symmetric: (e^m - e^lo) / (e^hi - e^lo)
    ms = np.array([0.3 - math.log(2), -1.2, 0.9 - math.log(3), 0.1 - math.log(1.5)])
    assert_close(out["exp_sym"]["all"], (np.exp(ms) - math.exp(-2.5)) / (math.exp(0.6) - math.exp(-2.5)), rtol=1e-7, where="exp_sym")
    # without adaptive scaling, or before any range is seen: the raw means (exp'd in log space)
    assert_close(out["no_adapt_exp"]["all"], np.exp(m), where="no_adapt_exp")
    assert_close(out["no_adapt_lin"]["all"], [0.3, 0.0, 1.4 / 3, 0.4], where="no_adapt_lin")
    assert_close(out["no_range"]["all"], [0.3, -0.9, 1.4 / 3, 0.4], where="no_range")
    # a range narrower than 1e-9 is widened to 1e-9
    assert_close(out["narrow"]["all"], [0.0, 0.0, 1e-12 / 1e-9, 0.0], rtol=1e-3, atol=1e-9, where="narrow")
    for name, v in out.items():
        assert_close(np.asarray(v["sub"]), np.asarray(v["all"])[[3, 1]], where=f"{name} subset")
    narrow = {k: v for k, v in out.items() if k != "narrow"}
    assert_close(narrow, {k: v for k, v in ref.items() if k != "narrow"}, rtol=1e-7, where="normalized_means_state")
    assert_close(out["narrow"], ref["narrow"], rtol=1e-3, atol=1e-9, where="narrow")


def test_impute(outputs, reference):
    out, ref = outputs["impute"], reference["impute"]
    # asymmetric scaling: a failed job is the worst possible improvement
    assert out["asym_exp"] == -np.inf
    assert out["asym_lin"] == 0.0
    assert out["sym_none_seen"] == 0.0
    # symmetric: the lowest seen mean minus the spread of the seen means (1 if undefined)
    assert math.isclose(out["sym_one_seen"], 0.3 - 1.0, rel_tol=1e-12)
    assert math.isclose(out["sym_two_seen"], -0.5 - float(np.std([0.3, -0.5], ddof=1)), rel_tol=1e-9)
    assert math.isclose(out["sym_equal"], 0.3 - 1.0, rel_tol=1e-12)
    mu = np.array([0.3, -0.9, 1.4 / 3, 0.4])
    assert math.isclose(out["sym_all"], mu.min() - mu.std(ddof=1), rel_tol=1e-9)
    assert_close(out, ref, where="impute")
