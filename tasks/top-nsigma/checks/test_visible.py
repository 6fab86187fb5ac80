"""The checks agent mode may show a model (task.yaml `agent`): hand-worked masks and draws.

Self-contained: the visible check sandbox holds only this file of checks/.
"""

import numpy as np


def test_mask_hand_visible(outputs, reference):
    out = outputs["mask_hand"]  # logits [1, 2, 3, 6]: M = 6, σ = √3.5; n = 1, 1.7, 2.7
    np.testing.assert_array_equal(out[1], [False, False, True, True])
    assert len(out) == len(reference["mask_hand"])
    for got, want in zip(out, reference["mask_hand"]):
        np.testing.assert_array_equal(got, want)


def test_top_k_visible(outputs, reference):
    out = outputs["top_k"]
    np.testing.assert_array_equal(out[0], [True, False, False, True])
    assert len(out) == len(reference["top_k"])
    for got, want in zip(out, reference["top_k"]):
        np.testing.assert_array_equal(got, want)


def test_pipeline_none_visible(outputs, reference):
    out = outputs["pipeline_none"]  # probabilities [0.1, 0.2, 0.3, 0.4]
    assert out["T1"] == [0, 1, 2, 3]
    assert out == reference["pipeline_none"]
