"""The checks agent mode shows: the hand-worked balanced table and the hand-worked
baseline (tolerances as in _ra.py)."""

import numpy as np

from _ra import ADV_TOL, split_kept


def test_balanced_hand_groups(outputs, reference):
    out = outputs["balanced_hand"]
    kept = {u: split_kept(out, u, 0.7) for u in sorted(out["selected"])}
    assert kept == {"p0": (2, 2), "p1": (4, 0), "p2": (2, 2), "p3": (2, 2), "p4": (0, 4), "p5": (1, 3), "p6": (3, 1)}
    assert [r[:3] for r in out["rounds"]] == [[7, 1, 1], [6, 1, 2], [5, 1, 3]]


def test_advantage_hand_first_group(outputs, reference):
    adv = np.asarray(outputs["advantage_hand"]["advantages"])[:4, 0]
    s = np.sqrt(15 / 56)  # 3 correct of 8 seen: mean 3/8, std sqrt(8/7 * 3/8 * 5/8)
    np.testing.assert_allclose(adv, [5 / 8 / s, 5 / 8 / s, -3 / 8 / s, -3 / 8 / s], **ADV_TOL)
