"""Checks for Reinforce-Ada (arXiv 2510.04996) over the cases' outputs: hand-worked
tables, the paper's procedure re-derived on counts (checks/_ra.py: rounds of
round_repeat responses for the still-active prompts, the balanced / positive-focused
stopping rules, groups of n as close to half correct as the counts allow, the baseline
from all responses collected for a prompt), closed forms of the advantages, and the
reference's outputs. Tolerances are stated in _ra.py.
"""

import numpy as np

from _ra import (
    ADV_TOL,
    assert_like_reference,
    assert_sampling,
    baseline_advantage,
    global_advantage_no_std,
    local_advantage,
    split_kept,
)
from _ra_inputs import ADV_HAND, GRADED_TABLE, HAND, HAND_TABLE, adv_random, random_setting


def kept_of(out, thr):
    return {u: split_kept(out, u, thr) for u in sorted(out["selected"])}


# ---- hand-worked tables (6 prompts, rounds of 4 responses, groups of 4) -------------------


def test_balanced_hand(outputs, reference):
    out = outputs["balanced_hand"]
    # p0 has 2 correct and 2 wrong after round 0, p3 after round 1 (1 + 4 wrong), p2 after
    # round 2 (its second correct answer); p1, p4, p5 never do and keep what is closest to
    # half and half: 4 correct, 4 wrong, 1 correct + 3 wrong; p6 (one wrong answer in 12)
    # keeps 3 correct + 1 wrong.
    assert kept_of(out, 0.7) == {"p0": (2, 2), "p1": (4, 0), "p2": (2, 2), "p3": (2, 2), "p4": (0, 4), "p5": (1, 3), "p6": (3, 1)}
    assert out["pos_count"] == {"p0": 2, "p1": 12, "p2": 2, "p3": 3, "p4": 0, "p5": 1, "p6": 11}
    assert out["neg_count"] == {"p0": 2, "p1": 0, "p2": 10, "p3": 5, "p4": 12, "p5": 11, "p6": 1}
    assert [r[:3] for r in out["rounds"]] == [[7, 1, 1], [6, 1, 2], [5, 1, 3]]
    assert out["calls"] == [28, 24, 20]
    # p3's baseline: 3 correct of 8, std sqrt(15/56)
    mean, std = 3 / 8, np.sqrt(15 / 56)
    np.testing.assert_allclose(np.array(out["advantages"]["p3"])[:, 1], [-mean / std] * 2 + [(1 - mean) / std] * 2, **ADV_TOL)
    assert_sampling(out, HAND_TABLE, HAND, "balanced", "balanced_hand")
    assert_like_reference(out, reference["balanced_hand"], 0.7, "balanced_hand")


def test_positive_hand(outputs, reference):
    out = outputs["positive_hand"]
    # one correct answer is enough: p0, p1, p3, p5, p6 stop after round 0, p2 after round 1;
    # p4 never does (4 wrong kept). p1 has no wrong answer: 4 correct; p3 (3 correct, 1 wrong)
    # and p2 (1 correct, 7 wrong) keep as close to half as they can.
    assert kept_of(out, 0.7) == {"p0": (2, 2), "p1": (4, 0), "p2": (1, 3), "p3": (3, 1), "p4": (0, 4), "p5": (1, 3), "p6": (4, 0)}
    assert out["pos_count"] == {"p0": 2, "p1": 4, "p2": 1, "p3": 3, "p4": 0, "p5": 1, "p6": 4}
    assert out["neg_count"] == {"p0": 2, "p1": 0, "p2": 7, "p3": 1, "p4": 12, "p5": 3, "p6": 0}
    assert [r[:3] for r in out["rounds"]] == [[7, 5, 5], [2, 1, 6], [1, 0, 6]]
    assert out["calls"] == [28, 8, 4]
    # p1: all correct, zero advantage; p4: all wrong, zero advantage
    np.testing.assert_allclose(np.array(out["advantages"]["p1"])[:, 1], 0.0, atol=1e-6)
    np.testing.assert_allclose(np.array(out["advantages"]["p4"])[:, 1], 0.0, atol=1e-6)
    assert_sampling(out, HAND_TABLE, HAND, "positive_focused", "positive_hand")
    assert_like_reference(out, reference["positive_hand"], 0.7, "positive_hand")


def test_balanced_graded(outputs, reference):
    out = outputs["balanced_graded"]
    # "correct" is reward > 0.7, strictly: q0 stops in round 0 (0.9, 0.75 against 0.7, 0.7),
    # q1 and q2 in round 1, q3 never
    assert kept_of(out, 0.7) == {"q0": (2, 2), "q1": (2, 2), "q2": (2, 2), "q3": (0, 4)}
    assert [r[:3] for r in out["rounds"]] == [[4, 1, 1], [3, 2, 3], [1, 0, 3]]
    assert out["pos_count"] == {"q0": 2, "q1": 2, "q2": 5, "q3": 0}
    assert_sampling(out, GRADED_TABLE, HAND, "balanced", "balanced_graded")
    assert_like_reference(out, reference["balanced_graded"], 0.7, "balanced_graded")


# ---- seeded tables ----------------------------------------------------------------------


def test_balanced_random(outputs, reference):
    table, settings = random_setting("small")
    assert_sampling(outputs["balanced_random"], table, settings, "balanced", "balanced_random")
    assert_like_reference(outputs["balanced_random"], reference["balanced_random"], settings["positive_threshold"], "balanced_random")


def test_positive_random(outputs, reference):
    table, settings = random_setting("small")
    assert_sampling(outputs["positive_random"], table, settings, "positive_focused", "positive_random")
    assert_like_reference(outputs["positive_random"], reference["positive_random"], settings["positive_threshold"], "positive_random")


def test_positive_random_wide(outputs, reference):
    # 8 responses a round for groups of 4: a prompt that stops keeps 4 of 8 or more
    table, settings = random_setting("wide")
    out = outputs["positive_random_wide"]
    assert_sampling(out, table, settings, "positive_focused", "positive_random_wide")
    assert_like_reference(out, reference["positive_random_wide"], settings["positive_threshold"], "positive_random_wide")


def test_balanced_random_wide(outputs, reference):
    table, settings = random_setting("wide")
    out = outputs["balanced_random_wide"]
    assert_sampling(out, table, settings, "balanced", "balanced_random_wide")
    assert_like_reference(out, reference["balanced_random_wide"], settings["positive_threshold"], "balanced_random_wide")


def test_balanced_random_large(outputs, reference):
    table, settings = random_setting("large")
    out = outputs["balanced_random_large"]
    assert_sampling(out, table, settings, "balanced", "balanced_random_large")
    assert_like_reference(out, reference["balanced_random_large"], settings["positive_threshold"], "balanced_random_large")


def test_positive_random_large(outputs, reference):
    table, settings = random_setting("large")
    out = outputs["positive_random_large"]
    assert_sampling(out, table, settings, "positive_focused", "positive_random_large")
    assert_like_reference(out, reference["positive_random_large"], settings["positive_threshold"], "positive_random_large")


# ---- the global-statistics baseline ------------------------------------------------------


def assert_advantages(out, groups, what):
    adv = np.asarray(out["advantages"])
    assert adv.shape == (len(out["uids"]), 3), f"{what}: shape {adv.shape}"
    want = [baseline_advantage(r, groups[u][0], groups[u][1]) for u, r in zip(out["uids"], out["rewards"])]
    np.testing.assert_allclose(adv[:, 0], want, **ADV_TOL, err_msg=f"{what}: advantages")
    np.testing.assert_allclose(adv[:, 1], want, **ADV_TOL, err_msg=f"{what}: advantages")
    np.testing.assert_allclose(adv[:, 2], 0.0, atol=0, err_msg=f"{what}: masked token")
    np.testing.assert_allclose(np.asarray(out["returns"]), adv, atol=0, err_msg=f"{what}: returns")


def test_advantage_hand(outputs, reference):
    out = outputs["advantage_hand"]
    adv = np.asarray(out["advantages"])[:, 0]
    # a: 3 of 8 correct, mean 3/8, std sqrt(8/7 * 3/8 * 5/8) = sqrt(15/56)
    s = np.sqrt(15 / 56)
    np.testing.assert_allclose(adv[:4], [5 / 8 / s, 5 / 8 / s, -3 / 8 / s, -3 / 8 / s], **ADV_TOL)
    # b: 1 of 2, mean 1/2, std sqrt(1/2)
    np.testing.assert_allclose(adv[4:6], [np.sqrt(0.5), -np.sqrt(0.5)], **ADV_TOL)
    # d, e: no spread, zero advantage
    np.testing.assert_allclose(adv[10:18], 0.0, atol=1e-6)
    # f: 1 of 16, mean 1/16, std 1/4
    np.testing.assert_allclose(adv[18:22], [3.75, -0.25, -0.25, -0.25], **ADV_TOL)
    # g, h: one response collected, mean 0 and scale 1 (GRPO's convention for a group of one)
    np.testing.assert_allclose(adv[22:24], [1.0, 0.0], **ADV_TOL)
    assert_advantages(out, ADV_HAND, "advantage_hand")
    np.testing.assert_allclose(adv, np.asarray(reference["advantage_hand"]["advantages"])[:, 0], **ADV_TOL)


def test_advantage_random(outputs, reference):
    groups, _ = adv_random()
    out = outputs["advantage_random"]
    assert_advantages(out, groups, "advantage_random")
    np.testing.assert_allclose(np.asarray(out["advantages"]), np.asarray(reference["advantage_random"]["advantages"]), **ADV_TOL)


def test_advantage_variants(outputs, reference):
    groups, _ = adv_random()
    groups = dict(groups, solo=(3, 1, [1.0]))
    out = outputs["advantage_variants"]
    expected = {
        "no_std": lambda u, r: global_advantage_no_std(r, groups[u][0], groups[u][1]),
        "local": lambda u, r: local_advantage(r, groups[u][2]),
        "no_counts": lambda u, r: local_advantage(r, groups[u][2]),
        "local_no_std": lambda u, r: local_advantage(r, groups[u][2], norm=False),
    }
    for key, f in expected.items():
        got = np.asarray(out[key]["advantages"])
        want = [f(u, r) for u, r in zip(out[key]["uids"], out[key]["rewards"])]
        np.testing.assert_allclose(got[:, 1], want, **ADV_TOL, err_msg=key)
        np.testing.assert_allclose(got[:, 2], 0.0, atol=0, err_msg=f"{key}: masked token")
        np.testing.assert_allclose(got, np.asarray(reference["advantage_variants"][key]["advantages"]), **ADV_TOL, err_msg=key)
