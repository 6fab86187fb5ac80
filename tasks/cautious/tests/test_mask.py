"""The cautious mask: support and rescaling, checked by hand and by invariants."""

import numpy as np
from cautious import cautious_mask


def arr(*values):
    return np.array(values, dtype=float)


def test_hand_example():
    u = arr(1.0, -2.0, 3.0, 0.0, -1.0)
    g = arr(2.0, -1.0, -1.0, 5.0, 0.0)
    # u * g = (2, 2, -3, 0, 0): two agreeing coordinates, d = 5, scale 5 / (2 + 1)
    np.testing.assert_allclose(cautious_mask(u, g), arr(5 / 3, 5 / 3, 0.0, 0.0, 0.0))


def test_zero_product_is_masked():
    np.testing.assert_array_equal(cautious_mask(arr(1.0, 0.0, -2.0), arr(0.0, 1.0, 0.0)), arr(0.0, 0.0, 0.0))


def test_all_agree():
    u = arr(1.0, -2.0, 3.0, 4.0)
    np.testing.assert_allclose(cautious_mask(u, 0.5 * u), np.full(4, 4 / 5))


def test_none_agree_is_zero():
    u = arr(1.0, -2.0, 3.0)
    out = cautious_mask(u, -u)
    np.testing.assert_array_equal(out, np.zeros(3))


def test_one_agreeing_coordinate():
    out = cautious_mask(arr(1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0), arr(1.0, -1.0, -1.0, -1.0, -1.0, -1.0, -1.0))
    np.testing.assert_allclose(out, arr(3.5, 0, 0, 0, 0, 0, 0))


def test_random_support_and_value():
    rng = np.random.default_rng(0)
    u = rng.normal(size=200)
    g = rng.normal(size=200)
    out = cautious_mask(u, g)
    agree = u * g > 0
    np.testing.assert_array_equal(out != 0, agree)
    np.testing.assert_allclose(out[agree], 200 / (agree.sum() + 1))


def test_matrix_counts_all_elements():
    rng = np.random.default_rng(1)
    u = rng.normal(size=(3, 4))
    g = np.where(np.arange(12).reshape(3, 4) < 5, u, -u)  # the first five entries agree
    out = cautious_mask(u, g)
    assert out.shape == (3, 4)
    expected = np.where(np.arange(12).reshape(3, 4) < 5, 12 / 6, 0.0)
    np.testing.assert_allclose(out, expected)


def test_masked_update_is_a_descent_direction():
    rng = np.random.default_rng(2)
    for _ in range(20):
        u = rng.normal(size=50)
        g = rng.normal(size=50)
        mask = cautious_mask(u, g)
        agree = u * g > 0
        inner = float(np.dot(g, u * mask))
        assert inner >= 0.0
        np.testing.assert_allclose(inner, 50 / (agree.sum() + 1) * np.sum((u * g)[agree]))


def test_inputs_left_alone():
    u = arr(1.0, -1.0)
    g = arr(1.0, 1.0)
    cautious_mask(u, g)
    np.testing.assert_array_equal(u, arr(1.0, -1.0))
    np.testing.assert_array_equal(g, arr(1.0, 1.0))
