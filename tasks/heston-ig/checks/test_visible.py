"""The checks agent mode may show a model (task.yaml `agent`): hand-computed values.

Self-contained: the visible check sandbox holds only this file of checks/.
"""

import numpy as np


def test_ig_parameters_visible(outputs, reference):
    out = outputs["ig_parameters"]  # v = [0.04, 0], a = 0.1, b = 2, c = 0.5, dt = 0.1
    np.testing.assert_allclose(out["alpha"], [0.005, 0.001])
    for key in ("alpha", "mean", "shape"):
        np.testing.assert_allclose(out[key], reference["ig_parameters"][key], rtol=1e-9, atol=1e-12)


def test_log_price_step_visible(outputs, reference):
    out = outputs["log_price_step"]
    np.testing.assert_allclose(out[1], 0.025 - 0.01 - 0.6 * 0.08 - 0.8 * np.sqrt(0.02))
    np.testing.assert_allclose(out, reference["log_price_step"], rtol=1e-9, atol=1e-12)


def test_expected_variance_visible(outputs, reference):
    out = outputs["expected_variance"]  # v0 = 0.04, a = 0.1, b = 2 at t = 1
    np.testing.assert_allclose(out["t1"], 0.05 - 0.01 * np.exp(-2.0))
    np.testing.assert_allclose(out["t1"], reference["expected_variance"]["t1"], rtol=1e-9)
