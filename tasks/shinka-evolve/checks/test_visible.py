"""The checks agent mode may show a model (task.yaml `agent`): hand-worked weighted
parent probabilities and a hand-worked UCB selection."""

import numpy as np
from _shinka_checks import assert_close, ucb_exp_probs


def test_weighted_hand_visible(outputs, reference):
    out = outputs["weighted_hand"]
    # equal scores: only the offspring penalty 1 / (1 + children) is left
    assert_close(out["flat"]["probs"], np.array([1, 0.25, 0.5, 1, 1]) / 3.75)
    assert_close(out["i0_l10"]["probs"], reference["weighted_hand"]["i0_l10"]["probs"])


def test_ucb_hand_visible(outputs, reference):
    out = outputs["ucb_hand"]
    history = [(0, 0.5), (1, 1.0), (0, 0.1), (2, 0.0), (1, -0.3)]
    assert_close(out["p"], ucb_exp_probs(history, 0.2, 0.3, 3))
    assert_close(out, reference["ucb_hand"])
