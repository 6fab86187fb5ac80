"""The checks agent mode may show a model (task.yaml `agent`): the uniform disk's
visibility against its closed form, and the Fourier transforms of the basis against the
reference's. Self-contained apart from the helpers."""

import numpy as np
from scipy.special import j1

from _harmonix import polar_grid


def test_uniform_disk_visible(outputs):
    vis = np.asarray(outputs["uniform_disk"]["vis"])
    rho, _ = polar_grid(31, 20)
    np.testing.assert_allclose(vis, 2 * j1(rho) / rho, atol=1e-9)


def test_basis_transforms_visible(outputs, reference):
    for key in ("zernike", "chsh"):
        out, ref = np.asarray(outputs["basis_transforms"][key]), np.asarray(reference["basis_transforms"][key])
        assert out.shape == ref.shape
        np.testing.assert_allclose(out, ref, rtol=1e-8, atol=1e-10 * np.max(np.abs(ref)))
