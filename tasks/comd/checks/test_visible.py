"""The checks agent mode may show a model (task.yaml `agent`): the DC mode and the
recovered centre frequencies of well separated tones.

Self-contained: it needs no other file of checks/.
"""

import numpy as np

FS = 1000.0


def test_dc_mode_visible(outputs, reference):
    out = outputs["dc"]
    assert np.asarray(out["omega"])[0] == 0.0
    np.testing.assert_array_equal(np.asarray(out["omega_history"])[:, 0], 0.0)
    np.testing.assert_allclose(np.asarray(out["omega"]) * FS, np.asarray(reference["dc"]["omega"]) * FS, rtol=1e-6)


def test_separated_centre_frequencies_visible(outputs):
    hz = np.asarray(outputs["separated"]["omega"]) * FS
    assert abs(hz[0] - 2.0) < 0.5, hz
    np.testing.assert_allclose(hz[1:], [24.0, 288.0], rtol=0.02)
