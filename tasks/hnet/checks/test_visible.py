"""The checks agent mode shows: chunk selection and the dechunk smoothing on seeded
inputs, against the reference's outputs (tolerances as in test_hnet.py)."""

import numpy as np

from _hnet import arr
from _hnet_inputs import dechunk_inputs


def test_chunk_layer(outputs, reference):
    out, ref = outputs["chunk"]["padded"], reference["chunk"]["padded"]
    mask = arr(ref["mask"]).astype(bool)
    np.testing.assert_array_equal(arr(out["mask"]), mask)
    np.testing.assert_array_equal(arr(out["hidden"])[mask], arr(ref["hidden"])[mask])
    out, ref = outputs["chunk"]["packed"], reference["chunk"]["packed"]
    for key in ("hidden", "cu_seqlens"):
        np.testing.assert_array_equal(arr(out[key]), arr(ref[key]))


def test_dechunk_layer(outputs, reference):
    d = dechunk_inputs()
    np.testing.assert_allclose(
        arr(outputs["dechunk"]["padded"])[d["mask"]], arr(reference["dechunk"]["padded"])[d["mask"]],
        rtol=1e-4, atol=2e-5,
    )
