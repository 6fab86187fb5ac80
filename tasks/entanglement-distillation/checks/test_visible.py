"""The checks agent mode may show a model (task.yaml `agent`): the count of actions and
the first fidelity levels.

Self-contained apart from the helpers in checks/_mdp.py, which go along.
"""

import numpy as np
from _mdp import bbpssw


def test_action_counts_visible(outputs, reference):
    # m = 1..5: 2, 5, 14, 43, 142 actions (partial matchings x generation patterns)
    assert [out["nA"] for out in outputs["action_spaces"]] == [2, 5, 14, 43, 142]
    for out, ref in zip(outputs["action_spaces"], reference["action_spaces"], strict=True):
        assert out["actions"] == ref["actions"], f"m={out['m']}: the action sets differ"


def test_first_levels_visible(outputs, reference):
    out = outputs["fidelity_levels"][0]  # f0 = 0.75, fT = 0.79: f0 and D(f0, f0)
    np.testing.assert_allclose(out["f"], [0.75, bbpssw(0.75, 0.75)[0]], rtol=1e-12)
    np.testing.assert_allclose(out["f"], reference["fidelity_levels"][0]["f"], rtol=1e-12)
