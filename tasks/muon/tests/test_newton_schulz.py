"""Newton-Schulz orthogonalisation against the singular-value closed form."""

import numpy as np
import pytest
from muon import newton_schulz
from muon_closed_forms import A_, B_, C_, TOL, p5, rect_diag, unit


def test_ns_diagonal_closed_form():
    d = np.array([3.0, -1.0, 0.5])
    out = newton_schulz(rect_diag(d, (3, 5)))
    expected = rect_diag(p5(unit(d)), (3, 5))
    np.testing.assert_allclose(out, expected, **TOL)


def test_ns_diagonal_tall_closed_form():
    d = np.array([2.0, 0.0, -4.0])
    out = newton_schulz(rect_diag(d, (6, 3)))
    assert out.shape == (6, 3)
    expected = rect_diag(p5(unit(d)), (6, 3))
    np.testing.assert_allclose(out, expected, **TOL)


@pytest.mark.parametrize("shape", [(4, 6), (7, 3), (5, 5)])
def test_ns_acts_on_singular_values(shape):
    G = np.random.default_rng(1).normal(size=shape)
    U, s, Vt = np.linalg.svd(G, full_matrices=False)
    expected = U @ np.diag(p5(unit(s))) @ Vt
    np.testing.assert_allclose(newton_schulz(G), expected, **TOL)


@pytest.mark.parametrize("shape", [(16, 16), (24, 8), (8, 24)])
def test_ns_singular_values_near_one(shape):
    G = np.random.default_rng(2).normal(size=shape)
    s = np.linalg.svd(newton_schulz(G), compute_uv=False)
    assert s.min() > 0.6 and s.max() < 1.2


def test_ns_steps_argument():
    d = np.array([1.0, 2.0])
    x = unit(d)
    G = np.diag(d)
    np.testing.assert_allclose(newton_schulz(G, steps=0), np.diag(x), **TOL)
    np.testing.assert_allclose(newton_schulz(G, steps=1), np.diag(A_ * x + B_ * x**3 + C_ * x**5), **TOL)
    np.testing.assert_allclose(newton_schulz(G, steps=3), np.diag(p5(x, 3)), **TOL)


def test_ns_scale_invariant():
    G = np.random.default_rng(3).normal(size=(5, 4))
    ref = newton_schulz(G)
    np.testing.assert_allclose(newton_schulz(1e3 * G), ref, **TOL)
    np.testing.assert_allclose(newton_schulz(1e-2 * G), ref, atol=1e-4)
    np.testing.assert_allclose(newton_schulz(-G), -ref, **TOL)


def test_ns_zero_matrix_is_finite():
    out = newton_schulz(np.zeros((3, 4)))
    assert out.shape == (3, 4)
    np.testing.assert_array_equal(out, np.zeros((3, 4)))


def test_ns_leaves_input_alone():
    G = np.random.default_rng(4).normal(size=(3, 5))
    copy = G.copy()
    newton_schulz(G)
    np.testing.assert_array_equal(G, copy)
