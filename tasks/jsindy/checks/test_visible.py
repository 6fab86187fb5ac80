"""The checks agent mode may show a model (task.yaml `agent`): the trajectory's values at
the observations and the partial-observation residual.

Self-contained: the visible check sandbox holds only this file of checks/ (and helpers).
"""

import numpy as np
from _jsindy_inputs import problem


def test_operator_evaluation_visible(outputs, reference):
    out = outputs["operator_evaluation"]
    np.testing.assert_allclose(np.asarray(out["at_obs"]).flatten(), out["whitened_at_obs"], rtol=1e-7, atol=1e-9)
    np.testing.assert_allclose(out["value"], reference["operator_evaluation"]["value"], rtol=1e-6, atol=1e-9)


def test_partial_residual_visible(outputs):
    out = outputs["residuals"]
    _, _, x, v = problem()
    want = np.sum(x * v, axis=1) - np.sum(np.asarray(out["pred_obs"]) * v, axis=1)
    np.testing.assert_allclose(out["partial"], want, rtol=1e-7, atol=1e-9)
