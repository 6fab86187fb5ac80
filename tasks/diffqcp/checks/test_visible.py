"""The checks agent mode may show a model (task.yaml `agent`): the residual map's
Jacobian D_u Q and its adjoint at one point of the homogeneous embedding, and the
projection onto a product of second-order cones with its Jacobian.

Self-contained: the visible check sandbox holds only this file of checks/ (and the helpers).
"""

import numpy as np

from _qcp import embedding_jacobian, embedding_point


def test_embedding_jacobian_visible(outputs, reference):
    out = outputs["embedding_jacobian"]
    J = embedding_jacobian(*embedding_point(1))
    np.testing.assert_allclose(np.asarray(out["DuQ"]), J, rtol=1e-6, atol=1e-6)
    np.testing.assert_allclose(np.asarray(out["DuQ_T"]), J.T, rtol=1e-6, atol=1e-6)
    np.testing.assert_allclose(np.asarray(out["DuQ"]), np.asarray(reference["embedding_jacobian"]["DuQ"]),
                               rtol=1e-9, atol=1e-9)


def test_soc_projection_visible(outputs, reference):
    out, ref = outputs["soc_projection"], reference["soc_projection"]
    for key in ("proj", "jacobian", "product_proj", "product_jacobian"):
        np.testing.assert_allclose(np.asarray(out[key]), np.asarray(ref[key]), rtol=1e-9, atol=1e-10)
