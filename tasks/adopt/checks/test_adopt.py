"""Checks for ADOPT over the cases' outputs: values worked out by hand from the
algorithm, and the whole state compared with the reference implementation's."""

import os

import numpy as np
import pytest
from _close import assert_tree_close

SEED = int(os.environ.get("RCB_SEED", "0"))


def arr(*values):
    return np.array(values, dtype=float)


def test_first_step_only_initializes_v(outputs, reference):
    out = outputs["first_step"]
    np.testing.assert_array_equal(out["params"][0], arr(1.0, -2.0))
    np.testing.assert_array_equal(out["m"][0], arr(0.0, 0.0))
    np.testing.assert_allclose(out["v"][0], arr(0.25, 9.0))
    assert_tree_close(out, reference["first_step"])


def test_first_step_initial_v_is_squared_gradient(outputs, reference):
    rng = np.random.default_rng(SEED)
    params = [rng.normal(size=(3, 4)), rng.normal(size=5)]
    grads = [rng.normal(size=(3, 4)), rng.normal(size=5)]
    out = outputs["first_step_random"]
    assert len(out["v"]) == len(grads)
    for v, g in zip(out["v"], grads):
        np.testing.assert_allclose(v, g**2)
    for p, p0 in zip(out["params"], params):
        np.testing.assert_array_equal(p, p0)
    assert out["t"] == 0
    assert_tree_close(out, reference["first_step_random"])


def test_coupled_weight_decay_adds_to_gradient(outputs, reference):
    out = outputs["coupled_weight_decay"]
    np.testing.assert_allclose(out["v"][0], arr(1.2**2))
    np.testing.assert_allclose(out["params"][0], arr(2.0))
    assert_tree_close(out, reference["coupled_weight_decay"])


def test_decoupled_weight_decay_scales_parameters(outputs, reference):
    out = outputs["decoupled_weight_decay"]
    np.testing.assert_allclose(out["params"][0], arr(2.0 * (1 - 0.05)))
    np.testing.assert_allclose(out["v"][0], arr(1.0))
    assert_tree_close(out, reference["decoupled_weight_decay"])


def test_second_step_hand_computed(outputs, reference):
    out = outputs["second_step"]
    # normalised 1/sqrt(4) = 0.5; m = 0.1 * 0.5; theta = 1 - 0.1 * 0.05
    np.testing.assert_allclose(out["m"][0], arr(0.05))
    np.testing.assert_allclose(out["params"][0], arr(0.995))
    np.testing.assert_allclose(out["v"][0], arr(0.99 * 4 + 0.01 * 1))
    assert out["t"] == 1
    assert_tree_close(out, reference["second_step"])


def test_normalizer_excludes_current_gradient(outputs, reference):
    out = outputs["normalizer_excludes_current_gradient"]
    # ADOPT divides by sqrt(v_0) = 1, not by sqrt(0.5 + 0.5 * 100^2) as Adam would.
    np.testing.assert_allclose(out["m"][0], arr(10.0))
    np.testing.assert_allclose(out["params"][0], arr(-10.0))
    np.testing.assert_allclose(out["v"][0], arr(0.5 + 0.5 * 10000.0))
    assert_tree_close(out, reference["normalizer_excludes_current_gradient"])


def test_eps_floor_on_denominator(outputs, reference):
    out = outputs["eps_floor"]
    np.testing.assert_allclose(out["m"][0], arr(0.5 * 0.1))
    assert_tree_close(out, reference["eps_floor"])


def test_clipping_at_step_power(outputs, reference):
    out = outputs["clipping_at_step_power"]
    expected = -0.01 * sum(t**0.25 for t in range(1, 17))
    np.testing.assert_allclose(out["params"][0], arr(expected))
    assert_tree_close(out, reference["clipping_at_step_power"])


def test_no_clip_when_disabled(outputs, reference):
    out = outputs["no_clip_when_disabled"]
    np.testing.assert_allclose(out["params"][0], arr(-0.01 * 100 * 3))
    assert_tree_close(out, reference["no_clip_when_disabled"])


def test_momentum_accumulates(outputs, reference):
    out = outputs["momentum_accumulates"]
    assert out["ms"] == pytest.approx([0.25, 0.375, 0.4375])
    np.testing.assert_allclose(out["params"][0], arr(-(0.25 + 0.375 + 0.4375)))
    assert_tree_close(out, reference["momentum_accumulates"])


def test_second_moment_after_two_steps(outputs, reference):
    out = outputs["second_moment_after_two_steps"]
    np.testing.assert_allclose(out["v"][0], arr(0.9 * (0.9 * 4 + 0.1 * 1) + 0.1 * 9))
    assert_tree_close(out, reference["second_moment_after_two_steps"])


def test_converges_on_quadratic(outputs, reference):
    out = outputs["quadratic"]
    np.testing.assert_allclose(out["params"][0], arr(3.0, -1.0, 0.5), atol=0.05)
    assert_tree_close(out, reference["quadratic"], rtol=1e-7, atol=1e-10)


def test_random_walk_matches_reference(outputs, reference):
    assert_tree_close(outputs["random_walk"], reference["random_walk"], rtol=1e-7, atol=1e-10)
    assert_tree_close(
        outputs["random_walk_coupled"], reference["random_walk_coupled"], rtol=1e-7, atol=1e-10
    )
