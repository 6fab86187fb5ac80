"""The checks agent mode shows: the hand-worked clip example and the token split of the
hand-worked batch (tolerances as in test_archercoder.py)."""

import numpy as np

from _archer import close
from _archer_inputs import HAND_HIGH, HAND_LENGTHS, LR


def test_clip_hand(outputs, reference):
    out = outputs["clip_hand"]
    expected = [[-0.5, -0.7, -0.9, -1.1, -1.2, -1.5], [0.8, 0.7, 0.9, 1.1, 1.3, 1.7]]
    close(out["per_token"], expected, rtol=0, atol=1e-6, what="per-token losses")
    close(out["pg_loss"], reference["clip_hand"]["pg_loss"], rtol=0, atol=1e-6, what="pg_loss")


def test_update_hand_split(outputs, reference):
    out = outputs["update_hand"]
    expected = np.zeros((3, LR), dtype=bool)
    for b, (n, high) in enumerate(zip(HAND_LENGTHS, HAND_HIGH)):
        expected[b, :n] = True
        expected[b, high] = False
    np.testing.assert_array_equal(np.asarray(out["masks"][0], dtype=bool), expected)
