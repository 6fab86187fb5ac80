"""Tests for SimPO, checked against closed forms and values worked out by hand."""

import numpy as np
import pytest
from simpo import (
    BigramPolicy,
    average_log_prob,
    average_log_prob_grad,
    log_sigmoid,
    log_softmax,
    make_labels,
    reward_metrics,
    simpo_batch,
    simpo_logit_gradients,
    simpo_loss,
    simpo_reward,
    simpo_train_step,
    token_log_probs,
)

L = np.log


def hand_batch():
    """Two sequences, V = 3, T = 4, with probabilities chosen to be easy by hand.

    Row 0: ids [1, 2, 0, 1], prompt = 1 token, response = (2, 0), last token is padding.
      position 0 logits [0, 0, log 3]  -> p(2) = 3/5
      position 1 logits [log 4, 0, 0]  -> p(0) = 4/6
    Row 1: ids [0, 1, 1, 2], prompt = 2 tokens, response = (1, 2).
      position 1 logits [0, log 2, log 5] -> p(1) = 2/8
      position 2 logits [log 2, log 2, 0] -> p(2) = 1/5
    """
    ids = np.array([[1, 2, 0, 1], [0, 1, 1, 2]])
    labels = np.array([[-100, 2, 0, -100], [-100, -100, 1, 2]])
    logits = np.array(
        [
            [[0.0, 0.0, L(3)], [L(4), 0.0, 0.0], [5.0, 1.0, 2.0], [0.0, 9.0, 0.0]],
            [[1.0, 2.0, 3.0], [0.0, L(2), L(5)], [L(2), L(2), 0.0], [3.0, -1.0, 0.5]],
        ]
    )
    return ids, labels, logits


def numeric_grad(f, x, h=1e-6):
    grad = np.zeros_like(x)
    for idx in np.ndindex(x.shape):
        old = x[idx]
        x[idx] = old + h
        up = f()
        x[idx] = old - h
        down = f()
        x[idx] = old
        grad[idx] = (up - down) / (2 * h)
    return grad


def random_pair_batch(seed):
    rng = np.random.default_rng(seed)
    chosen = rng.normal(size=(2, 5, 4)) * 1.5
    rejected = rng.normal(size=(2, 5, 4)) * 1.5
    ids_c = rng.integers(0, 4, size=(2, 5))
    ids_r = rng.integers(0, 4, size=(2, 5))
    labels_c = make_labels(ids_c, [1, 2], [5, 4])
    labels_r = make_labels(ids_r, [2, 1], [5, 3])
    return chosen, labels_c, rejected, labels_r


# ---------------------------------------------------------------- primitives


def test_log_softmax_hand():
    out = log_softmax(np.array([[0.0, L(3)], [L(2), L(2)]]))
    np.testing.assert_allclose(out, [[L(0.25), L(0.75)], [L(0.5), L(0.5)]])


def test_log_softmax_large_logits_are_stable():
    out = log_softmax(np.array([[0.0, 1000.0], [1000.0, 1000.0]]))
    assert np.all(np.isfinite(out))
    np.testing.assert_allclose(out, [[-1000.0, 0.0], [-L(2), -L(2)]], atol=1e-12)


def test_log_softmax_matches_definition_on_3d():
    rng = np.random.default_rng(0)
    x = rng.normal(size=(2, 3, 4)) * 2
    expected = np.log(np.exp(x) / np.exp(x).sum(axis=2, keepdims=True))
    np.testing.assert_allclose(log_softmax(x), expected, atol=1e-12)
    np.testing.assert_allclose(log_softmax(x + 700.0), expected, atol=1e-9)


def test_log_sigmoid_values():
    x = np.array([-3.0, -0.5, 0.0, 0.5, 3.0])
    np.testing.assert_allclose(log_sigmoid(x), np.log(1.0 / (1.0 + np.exp(-x))))
    assert log_sigmoid(np.array(0.0)) == pytest.approx(-L(2))


def test_log_sigmoid_stable_tails():
    out = log_sigmoid(np.array([-1000.0, 1000.0]))
    np.testing.assert_allclose(out, [-1000.0, 0.0])


# ---------------------------------------------------------------- token log-probabilities


def test_token_log_probs_hand():
    _, labels, logits = hand_batch()
    logps, mask = token_log_probs(logits, labels)
    assert logps.shape == (2, 3) and mask.shape == (2, 3)
    np.testing.assert_array_equal(mask, [[True, True, False], [False, True, True]])
    np.testing.assert_allclose(logps, [[L(0.6), L(4 / 6), 0.0], [0.0, L(0.25), L(0.2)]], atol=1e-12)


def test_token_log_probs_match_definition():
    rng = np.random.default_rng(1)
    logits = rng.normal(size=(3, 6, 5))
    labels = rng.integers(0, 5, size=(3, 6))
    labels[0, :2] = -100
    labels[1, 4:] = -100
    labels[2, :1] = -100
    labels[2, 3] = -100
    logps, mask = token_log_probs(logits, labels)
    for b in range(3):
        for t in range(5):
            label = labels[b, t + 1]
            if label == -100:
                assert not mask[b, t]
                assert logps[b, t] == 0.0
            else:
                assert mask[b, t]
                row = logits[b, t]
                assert logps[b, t] == pytest.approx(row[label] - np.log(np.sum(np.exp(row))))


def test_uniform_logits_give_minus_log_v():
    labels = np.array([[-100, 1, 2, 3, 0], [-100, -100, 4, -100, -100]])
    logps, mask = token_log_probs(np.zeros((2, 5, 5)), labels)
    np.testing.assert_array_equal(mask, labels[:, 1:] != -100)
    np.testing.assert_allclose(logps, np.where(mask, -L(5), 0.0))


# ---------------------------------------------------------------- reward and loss


def test_average_log_likelihood_hand():
    _, labels, logits = hand_batch()
    np.testing.assert_allclose(average_log_prob(logits, labels), [L(0.4) / 2, L(0.05) / 2])


def test_average_log_likelihood_uniform_any_length():
    labels = np.array([[-100, 1, 2, 3, 0], [-100, -100, 4, -100, -100]])
    np.testing.assert_allclose(average_log_prob(np.zeros((2, 5, 5)), labels), [-L(5), -L(5)])


def test_reward_is_beta_times_average_log_likelihood():
    _, labels, logits = hand_batch()
    np.testing.assert_allclose(simpo_reward(logits, labels, 2.5), [2.5 * L(0.4) / 2, 2.5 * L(0.05) / 2])


def test_reward_is_length_normalised():
    labels = np.array([[-100, 1, 2, 3, 0, 1], [-100, -100, -100, -100, 3, -100]])
    np.testing.assert_allclose(simpo_reward(np.zeros((2, 6, 4)), labels, 3.0), [-3 * L(4), -3 * L(4)])


def test_loss_at_equal_rewards():
    r = np.array([-1.0, 0.3])
    np.testing.assert_allclose(simpo_loss(r, r, 0.0), [L(2), L(2)])
    np.testing.assert_allclose(simpo_loss(r, r, 1.5), [L(1 + np.exp(1.5))] * 2)


def test_loss_when_margin_equals_gamma():
    np.testing.assert_allclose(simpo_loss(np.array([2.0]), np.array([0.5]), 1.5), [L(2)])


def test_loss_hand_and_tails():
    out = simpo_loss(np.array([2.0, -500.0, 600.0]), np.array([0.5, 500.0, 0.0]), 0.5)
    np.testing.assert_allclose(out, [L(1 + np.exp(-1.0)), 1000.5, 0.0], atol=1e-12)


def test_batch_loss_hand():
    _, labels, logits = hand_batch()
    beta, gamma = 2.0, 0.5
    loss, metrics = simpo_batch(logits, labels, np.zeros((2, 4, 3)), labels, beta=beta, gamma=gamma)
    r_w = np.array([L(0.4), L(0.05)])  # 2 * average log-likelihood
    r_l = -2 * L(3)
    m = r_w - r_l - gamma
    assert loss == pytest.approx(np.mean(np.log1p(np.exp(-m))))
    assert metrics["rewards/accuracies"] == pytest.approx(0.5)
    assert metrics["rewards/margins"] == pytest.approx(np.mean(r_w - r_l))


def test_batch_loss_is_mean_over_pairs():
    labels = np.array([[-100, 1, 2], [-100, 2, 1]])
    chosen = np.zeros((2, 3, 3))
    # row 0 of the chosen batch puts all its mass on its labels: reward 0
    chosen[0, 0, 1] = chosen[0, 1, 2] = 800.0
    loss, _ = simpo_batch(chosen, labels, np.zeros((2, 3, 3)), labels, beta=1.0, gamma=0.0)
    expected = (L(1 + np.exp(-L(3))) + L(2)) / 2
    assert loss == pytest.approx(expected)


def test_reward_metrics_hand():
    # a tie (2 vs 2) does not count as a correct ranking
    m = reward_metrics(np.array([1.0, 2.0, 3.0, 4.0]), np.array([0.0, 2.0, 5.0, 1.0]))
    assert m["rewards/accuracies"] == pytest.approx(0.5)
    assert m["rewards/margins"] == pytest.approx(0.5)
    assert m["rewards/chosen"] == pytest.approx(2.5)
    assert m["rewards/rejected"] == pytest.approx(2.0)


# ---------------------------------------------------------------- gradients


def test_average_log_prob_grad_hand():
    _, labels, logits = hand_batch()
    g = average_log_prob_grad(logits, labels)
    assert g.shape == logits.shape
    np.testing.assert_allclose(g[0, 0], np.array([-0.2, -0.2, 0.4]) / 2)
    np.testing.assert_allclose(g[0, 1], np.array([1 - 4 / 6, -1 / 6, -1 / 6]) / 2)
    np.testing.assert_allclose(g[0, 2:], 0.0)
    np.testing.assert_allclose(g[1, 0], 0.0)
    np.testing.assert_allclose(g[1, 1], np.array([-1 / 8, 1 - 2 / 8, -5 / 8]) / 2)
    np.testing.assert_allclose(g[1, 3], 0.0)


def test_average_log_prob_grad_matches_finite_differences():
    logits, labels, _, _ = random_pair_batch(3)
    c = np.array([0.7, -1.3])
    numeric = numeric_grad(lambda: float(np.sum(c * average_log_prob(logits, labels))), logits)
    analytic = c[:, None, None] * average_log_prob_grad(logits, labels)
    np.testing.assert_allclose(analytic, numeric, atol=1e-7)
    np.testing.assert_allclose(analytic.sum(axis=2), 0.0, atol=1e-12)


def test_simpo_gradient_matches_finite_differences():
    chosen, labels_c, rejected, labels_r = random_pair_batch(4)
    beta, gamma = 2.5, 0.7

    def loss():
        return simpo_batch(chosen, labels_c, rejected, labels_r, beta=beta, gamma=gamma)[0]

    num_c = numeric_grad(loss, chosen)
    num_r = numeric_grad(loss, rejected)
    g_c, g_r = simpo_logit_gradients(chosen, labels_c, rejected, labels_r, beta, gamma)
    np.testing.assert_allclose(g_c, num_c, atol=1e-7)
    np.testing.assert_allclose(g_r, num_r, atol=1e-7)


def test_gradient_weight_at_equal_rewards():
    labels = np.array([[-100, 1, 2]])
    logits = np.zeros((1, 3, 4))
    beta, gamma = 2.0, 1.0
    g_c, g_r = simpo_logit_gradients(logits, labels, logits.copy(), labels, beta, gamma)
    s = 1.0 / (1.0 + np.exp(-gamma))  # σ(γ − 0)
    per_token = (np.eye(4)[[1, 2]] - 0.25) / 2  # (onehot − softmax) / |y|
    np.testing.assert_allclose(g_c[0, :2], -beta * s * per_token)
    np.testing.assert_allclose(g_r[0, :2], beta * s * per_token)
    np.testing.assert_allclose(g_c[0, 2], 0.0)


def test_gradient_vanishes_once_margin_is_reached():
    labels = np.array([[-100, 1, 2]])
    chosen = np.zeros((1, 3, 4))
    chosen[0, 0, 1] = chosen[0, 1, 2] = 40.0
    rejected = np.zeros((1, 3, 4))
    rejected[0, 0, 0] = rejected[0, 1, 0] = 40.0
    g_c, g_r = simpo_logit_gradients(chosen, labels, rejected, labels, 1.0, 1.0)
    assert np.abs(g_c).max() < 1e-12
    assert 0 < np.abs(g_r).max() < 1e-12
    g_c, g_r = simpo_logit_gradients(rejected, labels, chosen, labels, 1.0, 1.0)
    # reversed pair: weight ≈ 1, chosen label logits pushed up
    assert g_c[0, 0, 1] < -0.4 and g_c[0, 1, 2] < -0.4


# ---------------------------------------------------------------- training


def toy_data():
    chosen_ids = np.array([[0, 1, 2, 2], [3, 1, 2, 0]])
    rejected_ids = np.array([[0, 3, 3, 1], [3, 2, 0, 0]])
    labels_c = make_labels(chosen_ids, [1, 1], [4, 3])
    labels_r = make_labels(rejected_ids, [1, 1], [4, 4])
    return chosen_ids, labels_c, rejected_ids, labels_r


def test_train_step_follows_the_gradient():
    rng = np.random.default_rng(5)
    policy = BigramPolicy(rng.normal(size=(4, 4)))
    ids_c, lab_c, ids_r, lab_r = toy_data()
    beta, gamma, lr = 2.0, 0.8, 0.3

    def loss():
        return simpo_batch(policy.logits(ids_c), lab_c, policy.logits(ids_r), lab_r, beta=beta, gamma=gamma)[0]

    numeric = numeric_grad(loss, policy.table)
    before = policy.table.copy()
    simpo_train_step(policy, ids_c, lab_c, ids_r, lab_r, lr, beta, gamma)
    np.testing.assert_allclose(policy.table - before, -lr * numeric, atol=1e-7)


def test_training_separates_preferences():
    policy = BigramPolicy(np.zeros((4, 4)))
    ids_c, lab_c, ids_r, lab_r = toy_data()
    beta, gamma = 2.0, 0.5
    first, _ = simpo_batch(policy.logits(ids_c), lab_c, policy.logits(ids_r), lab_r, beta=beta, gamma=gamma)
    for _ in range(200):
        simpo_train_step(policy, ids_c, lab_c, ids_r, lab_r, 0.5, beta, gamma)
    last, metrics = simpo_batch(policy.logits(ids_c), lab_c, policy.logits(ids_r), lab_r, beta=beta, gamma=gamma)
    assert first == pytest.approx(L(1 + np.exp(gamma)))
    assert last < 0.1
    assert metrics["rewards/accuracies"] == 1.0
    assert metrics["rewards/margins"] > gamma
