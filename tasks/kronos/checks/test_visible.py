"""The checks agent mode may show a model (task.yaml `agent`): hand-computed bit codes.

Self-contained: the visible check sandbox holds only this file of checks/ (and the
helpers, which it does not need).
"""

import numpy as np

SCALE = 1.0 / np.sqrt(8.0)


def test_bits_to_indices_visible(outputs, reference):
    out = outputs["bits_to_indices"]
    # bits + - + + | - - - +, the first bit the least significant: 1 + 4 + 8 + 128
    np.testing.assert_array_equal(np.asarray(out["hand"]), [[141]])
    np.testing.assert_array_equal(np.asarray(out["hand_coarse"]), [[13]])
    np.testing.assert_array_equal(np.asarray(out["random"]), np.asarray(reference["bits_to_indices"]["random"]))


def test_indices_to_bits_visible(outputs, reference):
    out = outputs["indices_to_bits_hand"]
    first = np.asarray(out["half"])[0, 0]  # coarse 13, fine 8
    np.testing.assert_allclose(first, np.array([1, -1, 1, 1, -1, -1, -1, 1]) * SCALE, rtol=1e-6)
    np.testing.assert_allclose(
        np.asarray(out["full"]), np.asarray(reference["indices_to_bits_hand"]["full"]), rtol=1e-6
    )
