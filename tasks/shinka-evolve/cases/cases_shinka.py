"""Cases for ShinkaEvolve's weighted parent sampling (shinka/database/parents.py) and its
bandit-based LLM ensemble selection (shinka/llm/prioritization.py).

No language model, embedding or network call is involved: archives are small
in-memory SQLite databases (inputs/_shinka_inputs.py) and the bandit is fed fixed
sequences of rewards. The probabilities a sampler hands to `np.random.choice` are
recorded by wrapping that function; draws use a seeded global numpy state, so a
correct implementation (which computes the same probabilities and then calls the
visible `np.random.choice` line) draws the same parents.
"""

import numpy as np
from _shinka_inputs import (
    BANDIT_CONFIGS,
    SEED,
    archive_spec,
    bandit_run,
    build_db,
    hand_spec,
)

from shinka.database.parents import WeightedSamplingStrategy
from shinka.llm.prioritization import AsymmetricUCB

DRAWS = 300


class _Recorder:
    """Wraps np.random.choice and keeps the `p` of every call."""

    def __init__(self):
        self.calls = []
        self._orig = None

    def __enter__(self):
        self._orig = np.random.choice
        orig = self._orig

        def choice(a, *args, **kwargs):
            p = kwargs.get("p")
            if p is None and len(args) >= 3:
                p = args[2]
            self.calls.append(None if p is None else np.asarray(p, dtype=np.float64).copy())
            return orig(a, *args, **kwargs)

        np.random.choice = choice
        return self

    def __exit__(self, *exc):
        np.random.choice = self._orig
        return False


class _Config:
    def __init__(self, **kw):
        for k, v in kw.items():
            setattr(self, k, v)


# ----------------------------------------------------------------- weighted


def _weighted_draws(rows, island, lam, seed_offset, draws=DRAWS):
    conn, cur, get_program = build_db(rows)
    cfg = _Config(parent_selection_lambda=lam)
    strat = WeightedSamplingStrategy(cur, conn, cfg, get_program, None, island)
    np.random.seed(SEED + seed_offset)
    with _Recorder() as rec:
        ids = [strat.sample_parent().id for _ in range(draws)]
    return {"probs": rec.calls[0], "ids": ids}


def case_weighted_hand():
    rows = hand_spec()
    out = {"i0_l10": _weighted_draws(rows, 0, 10.0, 300), "all_l1": _weighted_draws(rows, None, 1.0, 301, 150)}
    # every score equal: MAD is zero
    flat = [dict(r, combined_score=0.4) for r in rows]
    out["flat"] = _weighted_draws(flat, 0, 10.0, 302, 150)
    # most scores equal to the median, one above: MAD is zero again
    tied = [dict(r, combined_score=(1.0 if r["id"] != "e" else 1.3)) for r in rows]
    out["tied"] = _weighted_draws(tied, 0, 2.0, 303, 150)
    # the same with e only 1e-7 above the others: the MAD floor sets the scale
    tiny = [dict(r, combined_score=(1.0 if r["id"] != "e" else 1.0 + 1e-7)) for r in rows]
    out["tiny"] = _weighted_draws(tiny, 0, 2.0, 304, 150)
    # two programs with four children each: the weights sum to less than one
    few = [dict(r, children_count=4) for r in rows if r["id"] in ("a", "b")]
    out["few"] = _weighted_draws(few, 0, 2.0, 305, 150)
    return out


def case_weighted_random():
    out = {}
    for j, (island, lam) in enumerate([(None, 10.0), (0, 1.0), (1, 25.0), (None, 0.3)]):
        rows = archive_spec(20 + j, n_programs=10 + 2 * j)
        out[f"i{island}_l{lam}"] = _weighted_draws(rows, island, lam, 310 + j)
    # a scaled and shifted copy of the scores (the weights are scale-free)
    rows = archive_spec(20, n_programs=10)
    scaled = [dict(r, combined_score=1000.0 * r["combined_score"] - 7.0) for r in rows]
    out["scaled"] = _weighted_draws(scaled, None, 10.0, 320, 150)
    return out


# ----------------------------------------------------------------- bandit


def _run_bandit(name, seed_offset, n_arms=4, n_updates=14, with_none=True, all_arms=False):
    kwargs = dict(BANDIT_CONFIGS[name])
    bandit = AsymmetricUCB(n_arms=n_arms, seed=SEED + seed_offset, **kwargs)
    baseline, steps = bandit_run(seed_offset, n_arms=n_arms, n_updates=n_updates, with_none=with_none, all_arms=all_arms)
    parent_only = kwargs.get("shift_by_parent", True) and not kwargs.get("shift_by_baseline", True)
    bandit.set_baseline_score(baseline)
    trace = []
    for arm, reward, parent in steps:
        if parent is None and parent_only:
            parent = baseline
        bandit.update_submitted(arm)
        bandit.update(arm, reward, baseline=parent)
        trace.append(
            {
                "s": bandit.s.copy(),
                "divs": bandit.divs.copy(),
                "n": bandit.n.copy(),
                "obs": [float(bandit._obs_min), float(bandit._obs_max)],
            }
        )
    return bandit, trace


def case_bandit_update():
    return {name: _run_bandit(name, 400 + j)[1] for j, name in enumerate(sorted(BANDIT_CONFIGS))}


def case_bandit_update_hand():
    out = {}
    for name, kw in {
        "exp": {"auto_decay": None},
        "linear": {"auto_decay": None, "exponential_base": None},
        "decay": {"auto_decay": 0.5},
    }.items():
        b = AsymmetricUCB(n_arms=3, seed=0, **kw)
        b.set_baseline_score(1.0)
        b.update(0, 2.0)                 # shifted by the baseline: 1.0
        b.update(0, 1.5, baseline=1.25)  # parent above baseline: 0.25
        b.update(1, 0.5, baseline=0.0)   # below max(parent, baseline): 0
        b.update(2, None)                # failed job
        out[name] = {
            "s": b.s.copy(),
            "divs": b.divs.copy(),
            "n_completed": b.n_completed.copy(),
            "obs": [float(b._obs_min), float(b._obs_max)],
        }
    return out


def case_normalized_means():
    out = {}
    for j, name in enumerate(sorted(BANDIT_CONFIGS)):
        bandit, _ = _run_bandit(name, 500 + j)
        out[name] = {
            "all": bandit._normalized_means(np.arange(bandit.n_arms)),
            "sub": bandit._normalized_means(np.array([2, 0])),
        }
        fresh = AsymmetricUCB(n_arms=3, seed=0, **BANDIT_CONFIGS[name])
        out[name]["fresh"] = fresh._normalized_means(np.arange(3))
    return out


def case_posterior():
    out = {}
    for j, name in enumerate(sorted(BANDIT_CONFIGS)):
        bandit, _ = _run_bandit(name, 600 + j, n_arms=3, with_none=False)
        rec = {"all": bandit.posterior()}
        rec["sub"] = bandit.posterior(subset=[0, 1])
        rec["sub_unseen"] = bandit.posterior(subset=np.array([2, 1]))
        rec["sub_empty"] = bandit.posterior(subset=[])
        rec["one"] = bandit.posterior(samples=1)
        out[name] = rec
        # every arm pulled, over a longer run
        bandit, _ = _run_bandit(name, 650 + j, n_arms=4, n_updates=40, all_arms=True)
        rec["seen"] = bandit.posterior()
        rec["seen_sub"] = bandit.posterior(subset=[3, 0, 1])
        rec["seen_named"] = bandit.posterior(subset=np.array([1, 2]))
        rec["picks"] = [int(np.argmax(bandit.select_llm()[0])) for _ in range(200)]
    fresh = AsymmetricUCB(n_arms=4, seed=0)
    out["fresh"] = {"all": fresh.posterior(), "sub": fresh.posterior(subset=[3, 1])}
    return out


def case_posterior_cost():
    out = {}
    for j, (coef, power) in enumerate([(0.3, 1.0), (0.7, 2.0), (1.0, 0.5)]):
        bandit = AsymmetricUCB(n_arms=3, seed=0, auto_decay=None, cost_aware_coef=coef, cost_power=power)
        bandit.set_baseline_score(0.5)
        rng = np.random.default_rng(SEED + 700 + j)
        for t in range(12):
            arm = t % 3
            bandit.update(arm, float(0.5 + rng.uniform(0.0, 1.0)))
            bandit.update_cost(arm, float([0.2, 1.0, 3.0][arm] * rng.uniform(0.5, 1.5)))
        out[f"c{coef}_p{power}"] = {"all": bandit.posterior(), "sub": bandit.posterior(subset=[1, 2])}
    return out


def case_ucb_hand():
    """Three arms, no decay, exponential asymmetric rewards."""
    b = AsymmetricUCB(n_arms=3, seed=0, auto_decay=None, exploration_coef=0.2, epsilon=0.3)
    b.set_baseline_score(0.0)
    for arm, reward in [(0, 0.5), (1, 1.0), (0, 0.1), (2, 0.0), (1, -0.3)]:
        b.update_submitted(arm)
        b.update(arm, reward)
    out = {"p": b.posterior()}
    b2 = AsymmetricUCB(n_arms=3, seed=0, auto_decay=None, exploration_coef=2.0, epsilon=0.3)
    b2.set_baseline_score(0.0)
    for arm, reward in [(0, 0.5), (1, 1.0), (0, 0.1), (2, 0.0), (1, -0.3)]:
        b2.update(arm, reward)
    out["p_explore"] = b2.posterior()
    sweep = {}
    for c in (0.0, 0.05, 0.1, 0.2, 0.35, 0.5, 1.0, 2.0, 5.0):
        b2.c = c
        sweep[str(c)] = b2.posterior()
    out["sweep"] = sweep
    tie = AsymmetricUCB(n_arms=3, seed=0, auto_decay=None)
    tie.set_baseline_score(0.0)
    for arm in (0, 1, 2):
        tie.update(arm, 0.7)
    out["tie"] = tie.posterior()
    once = AsymmetricUCB(n_arms=3, seed=0, auto_decay=None)
    once.set_baseline_score(0.0)
    for arm, reward in ((0, 0.2), (1, 0.9), (2, 0.4)):
        once.update(arm, reward)
    out["once"] = once.posterior()
    tie2 = AsymmetricUCB(n_arms=3, seed=0, auto_decay=None, epsilon=0.3)
    tie2.set_baseline_score(0.0)
    for arm, reward in ((0, 0.8), (1, 0.8), (2, 0.1), (0, 0.3), (1, 0.3), (2, 0.1)):
        tie2.update(arm, reward)
    out["tie2"] = tie2.posterior()
    out["tie_sub"] = tie.posterior(subset=[2, 0])
    return out


def _with_state(kwargs, s, divs, obs, n=None):
    bandit = AsymmetricUCB(n_arms=len(s), seed=0, **kwargs)
    divs = np.asarray(divs, dtype=np.float64)
    n = divs if n is None else np.asarray(n, dtype=np.float64)
    bandit.set_state(
        {
            "n_submitted": n, "n_completed": n, "s": np.asarray(s, dtype=np.float64), "divs": divs,
            "baseline": 0.0, "obs_min": obs[0], "obs_max": obs[1],
        }
    )
    return bandit


STATES = {
    # name: (AsymmetricUCB kwargs, s, divs, (obs_min, obs_max))
    "exp_asym": ({}, [0.3, -1.2, 0.9, -np.inf], [2.0, 1.0, 3.0, 1.0], (-np.inf, 0.4)),
    "exp_sym": ({"asymmetric_scaling": False, "exponential_base": 2.0}, [0.3, -1.2, 0.9, 0.1], [2.0, 1.0, 3.0, 1.5], (-2.5, 0.6)),
    "linear_asym": ({"exponential_base": None}, [0.6, 0.0, 1.4, 0.2], [2.0, 1.0, 3.0, 0.5], (0.0, 0.8)),
    "linear_sym": ({"exponential_base": None, "asymmetric_scaling": False}, [0.6, -0.9, 1.4, 0.2], [2.0, 1.0, 3.0, 0.5], (-1.0, 0.8)),
    "narrow": ({"exponential_base": None, "asymmetric_scaling": False}, [1.0, 1.0, 2.0 + 4e-12, 1.0], [2.0, 2.0, 4.0, 2.0], (0.5, 0.5 + 1e-12)),
    "no_adapt_exp": ({"adaptive_scale": False}, [0.3, -1.2, 0.9, -np.inf], [2.0, 1.0, 3.0, 1.0], (-np.inf, 0.4)),
    "no_adapt_lin": ({"adaptive_scale": False, "exponential_base": None}, [0.6, 0.0, 1.4, 0.2], [2.0, 1.0, 3.0, 0.5], (0.0, 0.8)),
    "no_range": ({"exponential_base": None, "asymmetric_scaling": False}, [0.6, -0.9, 1.4, 0.2], [2.0, 1.0, 3.0, 0.5], (np.inf, -np.inf)),
}


def case_normalized_means_state():
    out = {}
    for name, (kw, s, divs, obs) in STATES.items():
        bandit = _with_state(kw, s, divs, obs)
        out[name] = {"all": bandit._normalized_means(np.arange(4)), "sub": bandit._normalized_means(np.array([3, 1]))}
    return out


def case_impute():
    sym = {"exponential_base": None, "asymmetric_scaling": False}
    out = {
        "asym_exp": _with_state({}, [0.3, -1.2, 0.9, 0.0], [2.0, 1.0, 3.0, 1.0], (-np.inf, 0.4))._impute_worst_reward(),
        "asym_lin": _with_state({"exponential_base": None}, [0.6, 0.0, 1.4, 0.2], [2.0, 1.0, 3.0, 1.0], (0.0, 0.8))._impute_worst_reward(),
        "sym_none_seen": _with_state(sym, [0.0] * 4, [0.0] * 4, (np.inf, -np.inf))._impute_worst_reward(),
        "sym_one_seen": _with_state(sym, [0.6, 0.0, 0.0, 0.0], [2.0, 0.0, 0.0, 0.0], (0.3, 0.3))._impute_worst_reward(),
        "sym_two_seen": _with_state(sym, [0.6, -0.5, 0.0, 0.0], [2.0, 1.0, 0.0, 0.0], (-0.5, 0.3))._impute_worst_reward(),
        "sym_equal": _with_state(sym, [0.6, 0.3, 0.9, 0.0], [2.0, 1.0, 3.0, 0.0], (0.3, 0.3))._impute_worst_reward(),
        "sym_all": _with_state(sym, [0.6, -0.9, 1.4, 0.2], [2.0, 1.0, 3.0, 0.5], (-0.9, 0.4))._impute_worst_reward(),
        "sym_small_divs": _with_state(sym, [0.6, -0.9, 1.4, 0.2], [2.0, 1e-9, 3.0, 0.5], (-0.9, 0.4), n=[2.0, 1.0, 3.0, 1.0])._impute_worst_reward(),
    }
    return {k: float(v) for k, v in out.items()}
