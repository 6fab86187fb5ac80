"""The checks agent mode may show a model (task.yaml `agent`): the token-wise cosine
on hand-made cases and the weighted quantile against the reference.

Self-contained: the visible check sandbox holds only this file of checks/.
"""

import numpy as np


def test_token_cosine_visible(outputs, reference):
    out = outputs["token_cosine"]
    np.testing.assert_allclose(out["scaled_copy"], 1.0, atol=1e-12)
    np.testing.assert_allclose(out["negated"], -1.0, atol=1e-12)
    np.testing.assert_allclose(out["random"], reference["token_cosine"]["random"], rtol=1e-9)


def test_weighted_quantile_visible(outputs, reference):
    assert outputs["weighted_quantile"] == reference["weighted_quantile"]
