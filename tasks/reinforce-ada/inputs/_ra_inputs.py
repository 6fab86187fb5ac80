"""Scripted rewards for the reinforce-ada cases and checks (numpy only; both sandboxes
import this file, the checks regenerate every input from the same seeds).

A "prompt" is a uid; its k-th sampled response (k = 0, 1, 2, ... over all rounds, in the
order the rollout worker receives the rows) gets the reward table[uid][k]. No LLM is
involved: the rollout worker of the cases only counts, per uid, how many responses it has
produced, and the reward function looks the reward up. Tables are long enough for every
round (max_rounds * round_repeat entries).

RCB_SEED (0 when grading; rcb validate runs 0..9) varies the random tables.
"""

import os

import numpy as np

SEED = int(os.environ.get("RCB_SEED", "0"))

# ---- hand tables: 7 prompts, 3 rounds of 4 samples, groups of 4 ------------------------
HAND = dict(round_repeat=4, max_rounds=3, final_keep_per_prompt=4, positive_threshold=0.7)
HAND_TABLE = {
    "p0": [1, 0, 1, 0] + [1, 1, 1, 1] + [0, 0, 0, 0],  # two of each in round 0
    "p1": [1, 1, 1, 1] * 3,  # never a wrong answer
    "p2": [0, 0, 0, 0] + [1, 0, 0, 0] + [0, 1, 0, 0],  # second correct answer in round 2
    "p3": [1, 1, 1, 0] + [0, 0, 0, 0] + [1, 1, 1, 1],  # second wrong answer in round 1
    "p4": [0, 0, 0, 0] * 3,  # never a correct answer
    "p5": [1, 0, 0, 0] + [0, 0, 0, 0] + [0, 0, 0, 0],  # one correct answer in round 0 only
    "p6": [1, 1, 1, 1] + [1, 0, 1, 1] + [1, 1, 1, 1],  # one wrong answer in all
}
# graded rewards, threshold 0.7 ("positive" means reward > 0.7, strictly)
GRADED_TABLE = {
    "q0": [0.7, 0.9, 0.7, 0.75] + [0.2, 0.7, 0.7, 0.7] + [0.7] * 4,
    "q1": [0.7] * 4 + [0.71, 0.7, 0.0, 1.0] + [0.5] * 4,
    "q2": [0.8, 0.9, 1.0, 0.75] + [0.7, 0.95, 0.3, 0.1] + [0.0] * 4,
    "q3": [0.0, 0.1, 0.2, 0.3] * 3,
}

# ---- seeded tables ------------------------------------------------------------------------
# per-prompt success probabilities from easy to impossible, so that prompts finish in
# every round, and some never (fallback)
PROBS = [0.0, 0.03, 0.1, 0.25, 0.5, 0.5, 0.75, 0.9, 0.97, 1.0, 0.15, 0.85]


def random_setting(which):
    """(table, settings) of a seeded scenario: 12 prompts."""
    if which == "small":
        settings = dict(round_repeat=4, max_rounds=4, final_keep_per_prompt=4, positive_threshold=0.7)
        offset = 11
    elif which == "wide":  # more responses a round than a group keeps
        settings = dict(round_repeat=8, max_rounds=2, final_keep_per_prompt=4, positive_threshold=0.7)
        offset = 17
    else:  # "large": groups of 8, 8 samples a round
        settings = dict(round_repeat=8, max_rounds=3, final_keep_per_prompt=8, positive_threshold=0.5)
        offset = 23
    rng = np.random.default_rng(SEED + offset)
    n = settings["round_repeat"] * settings["max_rounds"]
    table = {}
    for i, p in enumerate(PROBS):
        correct = rng.random(n) < p
        if which in ("small", "wide"):
            table[f"u{i}"] = [float(c) for c in correct]
        else:  # rewards in [0, 1]: correct ones above 0.5, wrong ones at or below
            table[f"u{i}"] = [float(np.round(0.55 + 0.45 * rng.random(), 3)) if c else float(np.round(0.5 * rng.random(), 3)) for c in correct]
    return table, settings


# ---- advantage inputs (the global-statistics baseline on its own) -------------------------
# uid -> (positives seen, negatives seen, rewards of the kept responses)
ADV_HAND = {
    "a": (3, 5, [1.0, 1.0, 0.0, 0.0]),
    "b": (1, 1, [1.0, 0.0]),
    "c": (10, 2, [1.0, 1.0, 1.0, 0.0]),
    "d": (0, 8, [0.0, 0.0, 0.0, 0.0]),
    "e": (8, 0, [1.0, 1.0, 1.0, 1.0]),
    "f": (1, 15, [1.0, 0.0, 0.0, 0.0]),
    "g": (1, 0, [1.0]),  # a single response collected: as GRPO's own statistics do for a
    "h": (0, 1, [0.0]),  # group of one (see _compute_with_local_stats), mean 0 and scale 1
}


def adv_random():
    """Seeded counts for 10 uids, kept groups of 4 drawn from them, rows shuffled."""
    rng = np.random.default_rng(SEED + 37)
    groups = {}
    for i in range(10):
        total = int(rng.integers(4, 33))
        pos = int(rng.integers(0, total + 1))
        kept = [1.0] * min(pos, 2) + [0.0] * min(total - pos, 2)
        kept += [1.0 if pos > 2 else 0.0] * (4 - len(kept))
        groups[f"g{i}"] = (pos, total - pos, kept)
    order = rng.permutation(sum(len(g[2]) for g in groups.values()))
    return groups, [int(o) for o in order]
