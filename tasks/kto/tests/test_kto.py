"""Tests for KTO, checked against closed forms and values worked out by hand."""

import warnings

import numpy as np
import pytest
from kto import (
    TabularPolicy,
    desirable_weight_range,
    implicit_reward,
    kl_pairs,
    kto_batch,
    kto_losses,
    kto_metrics,
    kto_reward_gradient,
    kto_train_step,
    kto_value,
    reference_point,
    sequence_log_prob,
    sigmoid,
    weights_balanced,
)


def sig(x):
    return 1.0 / (1.0 + np.exp(-x))


# ---------------------------------------------------------------- building blocks


def test_sigmoid_values():
    x = np.array([-5.0, -1.0, 0.0, 0.5, 3.0])
    np.testing.assert_allclose(sigmoid(x), sig(x))
    np.testing.assert_allclose(sigmoid(np.array([np.log(3.0), -np.log(3.0)])), [0.75, 0.25])


def test_sigmoid_without_overflow():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        out = sigmoid(np.array([-800.0, -40.0, 40.0, 800.0]))
    np.testing.assert_allclose(out, [0.0, np.exp(-40.0) / (1 + np.exp(-40.0)), 1.0, 1.0], rtol=1e-12, atol=0)


def test_sequence_log_likelihood_is_a_sum():
    token_logps = np.array([[-0.5, -1.0, -7.0], [-2.0, -0.25, -0.25]])
    mask = np.array([[True, True, False], [False, True, True]])
    np.testing.assert_allclose(sequence_log_prob(token_logps, mask), [-1.5, -0.5])


def test_implicit_reward_is_log_ratio():
    policy = np.log(np.array([0.5, 0.1, 0.02]))
    reference = np.log(np.array([0.25, 0.1, 0.08]))
    np.testing.assert_allclose(implicit_reward(policy, reference), np.log([2.0, 1.0, 0.25]))


def test_mismatched_pairs_shift_by_one():
    np.testing.assert_array_equal(kl_pairs(4), [1, 2, 3, 0])
    np.testing.assert_array_equal(kl_pairs(2), [1, 0])


def test_reference_point_is_mean_log_ratio():
    assert reference_point(np.array([-1.0, -2.0, -0.5]), np.array([-2.0, -2.5, -2.5])) == pytest.approx(3.5 / 3)


def test_reference_point_clamped_at_zero():
    assert reference_point(np.array([-3.0, -1.0]), np.array([-1.0, -1.5])) == 0.0
    assert reference_point(np.array([-1.0, -1.0]), np.array([-1.0, -1.0])) == 0.0


# ---------------------------------------------------------------- value and loss


def test_value_at_the_reference_point_is_half_the_weight():
    r = np.array([0.3, 0.3, 0.3])
    v = kto_value(r, 0.3, np.array([True, False, True]), 0.7, 1.5, 0.8)
    np.testing.assert_allclose(v, [0.75, 0.4, 0.75])


def test_value_hand():
    beta, z0 = 0.5, 0.2
    r = z0 + np.array([2 * np.log(3.0), 2 * np.log(3.0), -2 * np.log(3.0), -2 * np.log(3.0)])
    v = kto_value(r, z0, np.array([True, False, True, False]), beta, 2.0, 4.0)
    # σ(log 3) = 3/4 and σ(-log 3) = 1/4
    np.testing.assert_allclose(v, [2.0 * 0.75, 4.0 * 0.25, 2.0 * 0.25, 4.0 * 0.75])


def test_value_saturates():
    r = np.array([1000.0, 1000.0, -1000.0, -1000.0])
    v = kto_value(r, 0.0, np.array([True, False, True, False]), 0.8, 2.0, 3.0)
    np.testing.assert_allclose(v, [2.0, 0.0, 0.0, 3.0], atol=1e-300)


def test_losses_hand():
    beta, z0 = 0.5, 1.0
    r = z0 + np.array([2 * np.log(3.0), 2 * np.log(3.0), 0.0])
    losses = kto_losses(r, z0, np.array([True, False, False]), beta, 2.0, 4.0)
    np.testing.assert_allclose(losses, [2.0 * 0.25, 4.0 * 0.75, 2.0])


def test_losses_lie_between_zero_and_lambda():
    rng = np.random.default_rng(0)
    r = rng.normal(size=50) * 10
    desirable = rng.random(50) < 0.5
    losses = kto_losses(r, 0.4, desirable, 1.0, 3.0, 0.5)
    lam = np.where(desirable, 3.0, 0.5)
    assert np.all(losses >= 0) and np.all(losses <= lam)
    # a desirable example above z0 costs less than half its weight, an undesirable one more
    np.testing.assert_array_equal(losses < lam / 2, (r > 0.4) == desirable)


# ---------------------------------------------------------------- batch


def tables():
    rng = np.random.default_rng(1)
    reference = rng.normal(size=(3, 3)) - 2.0
    # D = policy − reference. Diagonal: the rewards. D[i, i+1 mod 3]: the mismatched pairs.
    d = np.array([[2.0, 0.5, 9.0], [9.0, 1.0, 1.0], [0.0, 9.0, -1.0]])
    return reference + d, reference


def test_batch_hand():
    policy, reference = tables()
    loss, rewards, z0 = kto_batch(
        lambda x, y: policy[x, y], lambda x, y: reference[x, y], [0, 1, 2], [0, 1, 2],
        np.array([True, False, True]), beta=2.0, lambda_d=1.5, lambda_u=1.0,
    )  # fmt: skip
    np.testing.assert_allclose(rewards, [2.0, 1.0, -1.0])
    assert z0 == pytest.approx(0.5)
    # 1.5 σ(-3) + σ(1) + 1.5 σ(3), over 3 examples
    assert loss == pytest.approx((1.5 + sig(1.0)) / 3)


def test_batch_with_negative_kl_estimate():
    policy, reference = tables()
    policy = policy.copy()
    policy[0, 1] = reference[0, 1] - 1.0
    policy[1, 2] = reference[1, 2] - 2.0
    loss, _, z0 = kto_batch(
        lambda x, y: policy[x, y], lambda x, y: reference[x, y], [0, 1, 2], [0, 1, 2],
        np.array([True, False, True]), beta=1.0, lambda_d=1.0, lambda_u=2.0,
    )  # fmt: skip
    assert z0 == 0.0
    assert loss == pytest.approx((sig(-2.0) + 2 * sig(1.0) + sig(1.0)) / 3)


def test_batch_policy_equal_to_reference():
    reference = TabularPolicy(np.random.default_rng(2).normal(size=(2, 4)))
    loss, rewards, z0 = kto_batch(
        reference, reference, [0, 1, 1, 0], [3, 0, 2, 1], np.array([True, True, False, True]),
        beta=0.1, lambda_d=1.0, lambda_u=2.0,
    )  # fmt: skip
    np.testing.assert_allclose(rewards, 0.0)
    assert z0 == 0.0
    assert loss == pytest.approx((0.5 + 0.5 + 1.0 + 0.5) / 4)


def test_metrics_hand():
    m = kto_metrics(np.array([2.0, 1.0, -1.0, 3.0]), np.array([True, False, True, False]), 0.7, 0.5)
    assert m["rewards/chosen"] == pytest.approx(0.25)
    assert m["rewards/rejected"] == pytest.approx(1.0)
    assert m["rewards/margins"] == pytest.approx(-0.75)
    assert m["kl"] == 0.7


# ---------------------------------------------------------------- imbalance


def test_desirable_weight_range():
    low, high = desirable_weight_range(100, 1000)
    assert (low, high) == (pytest.approx(10.0), pytest.approx(40 / 3))
    low, high = desirable_weight_range(3, 1, lambda_u=2.0)
    assert (low, high) == (pytest.approx(2 / 3), pytest.approx(8 / 9))


def test_weights_balanced():
    assert weights_balanced(10.0, 1.0, 100, 1000)
    assert weights_balanced(13.0, 1.0, 100, 1000)
    assert weights_balanced(4.0, 3.0, 1, 1)
    assert not weights_balanced(14.0, 1.0, 100, 1000)
    assert not weights_balanced(9.9, 1.0, 100, 1000)
    assert not weights_balanced(1.0, 1.0, 1, 2)
    assert weights_balanced(1.0, 2.0, 5, 2)


# ---------------------------------------------------------------- gradients and training


def test_reward_gradient_at_reference_point():
    g = kto_reward_gradient(np.array([0.2, 0.2]), 0.2, np.array([True, False]), 0.5, 2.0, 3.0)
    # σ'(0) = 1/4, mean over 2 examples
    np.testing.assert_allclose(g, [-2.0 * 0.5 / 4 / 2, 3.0 * 0.5 / 4 / 2])


def test_reward_gradient_matches_finite_differences():
    rng = np.random.default_rng(3)
    r = rng.normal(size=7) * 2
    desirable = np.array([True, False, True, True, False, False, True])
    beta, z0, ld, lu = 0.7, 0.3, 1.5, 0.6
    g = kto_reward_gradient(r, z0, desirable, beta, ld, lu)
    h = 1e-6
    for i in range(7):
        e = np.zeros(7)
        e[i] = h
        up = np.mean(kto_losses(r + e, z0, desirable, beta, ld, lu))
        down = np.mean(kto_losses(r - e, z0, desirable, beta, ld, lu))
        assert g[i] == pytest.approx((up - down) / (2 * h), rel=1e-6, abs=1e-10)
    assert np.all(g[desirable] < 0) and np.all(g[~desirable] > 0)


def batch_data():
    prompts = [0, 1, 2, 0, 1]
    completions = [1, 3, 0, 2, 2]
    desirable = np.array([True, False, True, False, True])
    return prompts, completions, desirable


def test_train_step_follows_gradient_with_fixed_reference_point():
    rng = np.random.default_rng(4)
    policy = TabularPolicy(rng.normal(size=(3, 4)))
    reference = TabularPolicy(rng.normal(size=(3, 4)))
    prompts, completions, desirable = batch_data()
    beta, ld, lu, lr = 1.5, 1.2, 0.8, 0.4
    _, _, z0 = kto_batch(policy, reference, prompts, completions, desirable, beta, ld, lu)
    assert z0 > 0

    def loss_fixed_z0():
        r = np.array([policy(x, y) - reference(x, y) for x, y in zip(prompts, completions)])
        return np.mean(kto_losses(r, z0, desirable, beta, ld, lu))

    numeric = np.zeros_like(policy.logits)
    h = 1e-6
    for idx in np.ndindex(policy.logits.shape):
        old = policy.logits[idx]
        policy.logits[idx] = old + h
        up = loss_fixed_z0()
        policy.logits[idx] = old - h
        down = loss_fixed_z0()
        policy.logits[idx] = old
        numeric[idx] = (up - down) / (2 * h)
    before = policy.logits.copy()
    kto_train_step(policy, reference, prompts, completions, desirable, lr, beta, ld, lu)
    np.testing.assert_allclose(policy.logits - before, -lr * numeric, atol=1e-8)


def test_training_moves_desirable_up_and_undesirable_down():
    reference = TabularPolicy(np.zeros((3, 4)))
    policy = TabularPolicy(np.zeros((3, 4)))
    prompts, completions, desirable = batch_data()
    losses = [kto_train_step(policy, reference, prompts, completions, desirable, 2.0, 1.0) for _ in range(100)]
    assert losses[-1] < losses[0] - 0.2
    r = np.array([policy(x, y) - reference(x, y) for x, y in zip(prompts, completions)])
    assert np.all(r[desirable] > 0.5) and np.all(r[~desirable] < -0.5)
