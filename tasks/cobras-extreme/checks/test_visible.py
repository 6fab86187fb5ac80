"""The checks agent mode may show a model (task.yaml `agent`): the Gaussian window and
the partition of unity.

Self-contained: the visible check sandbox holds only this file of checks/ (and helpers).
"""

import numpy as np


def test_gaussian_window_visible(outputs, reference):
    x = np.linspace(-20.0, 40.0, 601)
    want = np.exp(-((x - 2.0 - 0.5 * 3.0) ** 2) / (2 * 1.5**2)) / np.sqrt(2 * np.pi * 1.5**2)
    np.testing.assert_allclose(outputs["gaussian_window"]["single"], want, rtol=1e-9, atol=1e-14)
    np.testing.assert_allclose(outputs["gaussian_window"]["moving"], reference["gaussian_window"]["moving"], rtol=1e-9, atol=1e-14)


def test_partition_of_unity_visible(outputs, reference):
    w = np.asarray(outputs["partition_of_unity"]["w8"])
    np.testing.assert_allclose(w.sum(axis=0), np.ones(64), atol=1e-10)
    np.testing.assert_allclose(w, reference["partition_of_unity"]["w8"], rtol=1e-9, atol=1e-12)
