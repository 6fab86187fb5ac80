"""The checks agent mode may show a model (task.yaml `agent`): two hand-computed steps."""

import numpy as np
from _close import assert_tree_close


def test_first_step_visible(outputs, reference):
    out = outputs["first_step"]
    np.testing.assert_array_equal(out["params"][0], np.array([1.0, -2.0]))
    assert_tree_close(out, reference["first_step"])


def test_second_step_visible(outputs, reference):
    out = outputs["second_step"]
    np.testing.assert_allclose(out["params"][0], np.array([0.995]))
    assert_tree_close(out, reference["second_step"])
