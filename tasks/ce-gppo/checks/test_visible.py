"""The checks agent mode shows: the hand-worked batch (clip interval [0.8, 1.28], beta1 = 0.5,
beta2 = 1, dual-clip bound 3): per-token values and gradients, and the clip fractions."""

import numpy as np

from _gppo import FRAC, close

HAND_VALUES = [[-0.5, -0.7, -0.9, -1.1, -1.28, -1.28],
               [0.4, 0.4, 0.9, 1.1, 1.3, 1.7],
               [0.8, 2.0, 5.0, 6.0, 6.0, 2.5]]
HAND_GRADS = [[-0.5, -0.7, -0.9, -1.1, -1.28, -1.28],
              [0.4, 0.4, 0.9, 1.1, 1.3, 1.7],
              [0.8, 2.0, 5.0, 0.0, 0.0, 2.5]]


def test_hand_visible(outputs):
    out = outputs["hand"]
    close(out["per_token"], HAND_VALUES, rtol=0, atol=1e-6, what="per-token loss")
    close(out["per_token_grad"], HAND_GRADS, rtol=0, atol=1e-6, what="per-token d loss / d log_prob")
    close(out["pg_clipfrac"], 5 / 17, **FRAC, what="pg_clipfrac")
    close(out["pg_clipfrac_lower"], 2 / 17, **FRAC, what="pg_clipfrac_lower")
    assert np.isfinite(out["pg_loss"])
