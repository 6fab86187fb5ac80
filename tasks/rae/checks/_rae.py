"""Helpers the RAE checks share."""

import numpy as np

# float32 forward passes of a few tiny layers: a correct implementation may order the
# same arithmetic differently (fused ops, another broadcast), which moves results by a
# few ulps; 1e-4 relative / 1e-5 absolute accepts that and nothing of substance.
RTOL, ATOL = 1e-4, 1e-5


def arr(x):
    return np.asarray(x, dtype=np.float64)


def close(out, ref, rtol=RTOL, atol=ATOL):
    out, ref = arr(out), arr(ref)
    assert out.shape == ref.shape, (out.shape, ref.shape)
    np.testing.assert_allclose(out, ref, rtol=rtol, atol=atol)
