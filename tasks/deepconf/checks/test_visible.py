"""The checks agent mode may show a model (task.yaml `agent`): hand-worked token
confidences, a confidence-weighted vote and the online voting step.

Self-contained: the visible check sandbox holds only this file of checks/ (and the helpers).
"""

import numpy as np


def test_token_confidence_hand_visible(outputs, reference):
    out = outputs["token_confidence_hand"]
    # -(1/k) Σ logprob over the returned logprobs, rounded to 3 decimals; empty positions give nothing
    np.testing.assert_allclose(out, [2.133, 0.02, 2.5], atol=1e-12)
    np.testing.assert_allclose(out, reference["token_confidence_hand"], atol=1e-12)


def test_weighted_vote_hand_visible(outputs, reference):
    out = outputs["weighted_vote_hand"]
    assert out["weights_beat_counts"] == "y"
    assert out == reference["weighted_vote_hand"]


def test_basic_voting_online_visible(outputs, reference):
    out = outputs["basic_voting_online"]["bar_6"]
    want = reference["basic_voting_online"]["bar_6"]
    assert sorted(out["voting_trace_ids"]) == sorted(want["voting_trace_ids"])
    assert out["voted"] == want["voted"]
