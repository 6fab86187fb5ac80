"""Tests for ORPO, checked against closed forms and values worked out by hand."""

import numpy as np
import pytest
from orpo import (
    BigramPolicy,
    average_log_prob,
    log_odds,
    log_odds_ratio,
    log_sigmoid,
    make_labels,
    odds_ratio_gradient,
    odds_ratio_loss,
    orpo_logit_gradients,
    orpo_loss,
    orpo_metrics,
    orpo_train_step,
    sft_loss,
    token_log_probs,
)

L = np.log


def hand_batch():
    """Two sequences, V = 3, T = 4, with probabilities chosen to be easy by hand.

    Row 0: ids [1, 2, 0, 1], prompt = 1 token, response = (2, 0), last token is padding.
      p(2) = 3/5 at position 0, p(0) = 4/6 at position 1.
    Row 1: ids [0, 1, 1, 2], prompt = 1 token, response = (1, 1, 2).
      p(1) = 3/5 at position 0, p(1) = 2/8 at position 1, p(2) = 1/5 at position 2.
    """
    labels = np.array([[-100, 2, 0, -100], [-100, 1, 1, 2]])
    logits = np.array(
        [
            [[0.0, 0.0, L(3)], [L(4), 0.0, 0.0], [5.0, 1.0, 2.0], [0.0, 9.0, 0.0]],
            [[0.0, L(3), 0.0], [0.0, L(2), L(5)], [L(2), L(2), 0.0], [3.0, -1.0, 0.5]],
        ]
    )
    return labels, logits


def odds(p):
    return p / (1 - p)


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
    labels_c = make_labels(rng.integers(0, 4, size=(2, 5)), [1, 2], [5, 4])
    labels_r = make_labels(rng.integers(0, 4, size=(2, 5)), [2, 1], [5, 3])
    return chosen, labels_c, rejected, labels_r


# ---------------------------------------------------------------- likelihoods


def test_log_sigmoid_values_and_tails():
    x = np.array([-3.0, -0.5, 0.0, 0.5, 3.0])
    np.testing.assert_allclose(log_sigmoid(x), np.log(1.0 / (1.0 + np.exp(-x))))
    np.testing.assert_allclose(log_sigmoid(np.array([-1000.0, 1000.0])), [-1000.0, 0.0])


def test_token_log_probs_hand():
    labels, logits = hand_batch()
    logps, mask = token_log_probs(logits, labels)
    np.testing.assert_array_equal(mask, [[True, True, False], [True, True, True]])
    np.testing.assert_allclose(logps, [[L(0.6), L(4 / 6), 0.0], [L(0.6), L(0.25), L(0.2)]], atol=1e-12)


def test_token_log_probs_match_definition():
    rng = np.random.default_rng(1)
    logits = rng.normal(size=(3, 6, 5))
    labels = rng.integers(0, 5, size=(3, 6))
    labels[0, :2] = -100
    labels[1, 4:] = -100
    labels[2, 3] = -100
    logps, mask = token_log_probs(logits, labels)
    assert logps.shape == (3, 5)
    for b in range(3):
        for t in range(5):
            label = labels[b, t + 1]
            if label == -100:
                assert not mask[b, t] and logps[b, t] == 0.0
            else:
                row = logits[b, t]
                assert mask[b, t]
                assert logps[b, t] == pytest.approx(row[label] - np.log(np.sum(np.exp(row))))


def test_average_log_likelihood_hand():
    labels, logits = hand_batch()
    np.testing.assert_allclose(average_log_prob(logits, labels), [L(0.4) / 2, L(0.03) / 3])


def test_average_log_likelihood_uniform():
    labels = np.array([[-100, 1, 2, 3, 0], [-100, -100, 3, -100, -100]])
    np.testing.assert_allclose(average_log_prob(np.zeros((2, 5, 4)), labels), [-L(4), -L(4)])


# ---------------------------------------------------------------- odds


def test_log_odds_hand():
    p = np.array([0.2, 0.5, 0.9, 0.01])
    np.testing.assert_allclose(log_odds(np.log(p)), [L(0.25), 0.0, L(9), L(1 / 99)], atol=1e-12)


def test_log_odds_stable_near_zero_and_one():
    eps = 1e-10
    # log(1 - e^{-eps}) = log(eps) - eps/2 + O(eps^2)
    assert log_odds(np.array(-eps)) == pytest.approx(-np.log(eps) - eps / 2, rel=1e-7)
    # P = e^{-800} underflows to 0: log odds must come from log P, not from P
    assert log_odds(np.array(-800.0)) == pytest.approx(-800.0, rel=1e-15)


def test_log_odds_ratio_hand():
    out = log_odds_ratio(np.log(np.array([0.5, 0.2, 0.3])), np.log(np.array([0.2, 0.5, 0.3])))
    np.testing.assert_allclose(out, [L(4), -L(4), 0.0], atol=1e-12)


def test_odds_ratio_loss_hand():
    lw = np.log(np.array([0.5, 0.3, 0.2]))
    ll = np.log(np.array([0.2, 0.3, 0.5]))
    np.testing.assert_allclose(odds_ratio_loss(lw, ll), [L(1.25), L(2), L(5)])


def test_odds_ratio_loss_tails():
    eps = 1e-6
    out = odds_ratio_loss(np.array([-eps, -700.0]), np.array([-700.0, -eps]))
    assert np.all(np.isfinite(out))
    # log odds(-eps) = -log(eps) - eps/2 + O(eps^2); log odds(-700) = -700 + O(e^-700)
    assert out[0] == pytest.approx(0.0, abs=1e-12)
    assert out[1] == pytest.approx(700 - np.log(eps) - eps / 2, rel=1e-9)


# ---------------------------------------------------------------- objective


def test_sft_loss_is_token_mean_over_batch():
    labels, logits = hand_batch()
    # five chosen tokens: 0.6 * 4/6 * 0.6 * 0.25 * 0.2 = 0.012
    assert sft_loss(logits, labels) == pytest.approx(-L(0.012) / 5)


def test_sft_loss_uniform():
    labels = np.array([[-100, 1, 2, 3], [-100, -100, -100, 3]])
    assert sft_loss(np.zeros((2, 4, 5)), labels) == pytest.approx(L(5))


def test_orpo_metrics_hand():
    lw = np.log(np.array([0.5, 0.3, 0.2, 0.5]))
    ll = np.log(np.array([0.2, 0.3, 0.5, 0.4]))
    m = orpo_metrics(lw, ll)
    # log OR = log 4, 0, -log 4, log 1.5: two of four pairs ranked right (a tie is not)
    assert m["accuracy"] == pytest.approx(0.5)
    assert m["log_odds_ratio"] == pytest.approx((L(4) + 0 - L(4) + L(1.5)) / 4)
    assert m["logps/chosen"] == pytest.approx(np.mean(lw))
    assert m["logps/rejected"] == pytest.approx(np.mean(ll))


def test_orpo_loss_hand():
    labels, logits = hand_batch()
    lam = 0.25
    loss, metrics = orpo_loss(logits, labels, np.zeros((2, 4, 3)), labels, lam=lam)
    p_w = np.array([0.4 ** (1 / 2), 0.03 ** (1 / 3)])
    p_l = 1 / 3
    ratio = odds(p_w) / odds(p_l)
    l_or = np.mean(-np.log(ratio / (1 + ratio)))
    l_sft = -L(0.012) / 5
    assert loss == pytest.approx(l_sft + lam * l_or)
    assert metrics["sft_loss"] == pytest.approx(l_sft)
    assert metrics["or_loss"] == pytest.approx(l_or)
    assert metrics["accuracy"] == pytest.approx(0.5)


def test_orpo_loss_without_preference_term_is_sft():
    labels, logits = hand_batch()
    loss, _ = orpo_loss(logits, labels, logits.copy(), labels, lam=0.0)
    assert loss == pytest.approx(-L(0.012) / 5)
    loss, _ = orpo_loss(logits, labels, logits.copy(), labels, lam=2.0)
    assert loss == pytest.approx(-L(0.012) / 5 + 2.0 * L(2))


# ---------------------------------------------------------------- gradients


def test_odds_ratio_gradient_hand():
    d_w, d_l = odds_ratio_gradient(np.log(np.array([0.5, 0.3])), np.log(np.array([0.2, 0.3])))
    # pair 0: OR = 4, delta = 1/5; pair 1: OR = 1, delta = 1/2
    np.testing.assert_allclose(d_w, [-0.2 / 0.5, -0.5 / 0.7])
    np.testing.assert_allclose(d_l, [0.2 / 0.8, 0.5 / 0.7])


def test_odds_ratio_gradient_matches_finite_differences():
    rng = np.random.default_rng(2)
    lw = -rng.uniform(0.05, 3.0, size=6)
    ll = -rng.uniform(0.05, 3.0, size=6)
    d_w, d_l = odds_ratio_gradient(lw, ll)
    h = 1e-6
    np.testing.assert_allclose(d_w, (odds_ratio_loss(lw + h, ll) - odds_ratio_loss(lw - h, ll)) / (2 * h), rtol=1e-6)
    np.testing.assert_allclose(d_l, (odds_ratio_loss(lw, ll + h) - odds_ratio_loss(lw, ll - h)) / (2 * h), rtol=1e-6)
    assert np.all(d_w < 0) and np.all(d_l > 0)


def test_odds_ratio_gradient_vanishes_when_chosen_dominates():
    d_w, d_l = odds_ratio_gradient(np.array([-1e-3]), np.array([-30.0]))
    assert abs(d_w[0]) < 1e-9 and abs(d_l[0]) < 1e-12


def test_logit_gradients_match_finite_differences():
    chosen, labels_c, rejected, labels_r = random_pair_batch(4)
    lam = 0.7

    def loss():
        return orpo_loss(chosen, labels_c, rejected, labels_r, lam=lam)[0]

    num_c = numeric_grad(loss, chosen)
    num_r = numeric_grad(loss, rejected)
    g_c, g_r = orpo_logit_gradients(chosen, labels_c, rejected, labels_r, lam=lam)
    np.testing.assert_allclose(g_c, num_c, atol=1e-7)
    np.testing.assert_allclose(g_r, num_r, atol=1e-7)


def test_logit_gradients_of_sft_alone():
    labels, logits = hand_batch()
    g_c, g_r = orpo_logit_gradients(logits, labels, logits.copy(), labels, lam=0.0)
    np.testing.assert_allclose(g_r, 0.0)
    # −(onehot − softmax) / 5 tokens at the logits predicting each chosen token
    np.testing.assert_allclose(g_c[0, 0], -np.array([-0.2, -0.2, 0.4]) / 5)
    np.testing.assert_allclose(g_c[1, 2], -np.array([-0.4, -0.4, 0.8]) / 5)
    np.testing.assert_allclose(g_c[0, 2:], 0.0)
    np.testing.assert_allclose(g_c[1, 3], 0.0)


# ---------------------------------------------------------------- training


def toy_data():
    chosen_ids = np.array([[0, 1, 2, 2], [3, 1, 2, 0]])
    rejected_ids = np.array([[0, 1, 3, 1], [3, 2, 0, 0]])
    labels_c = make_labels(chosen_ids, [1, 1], [4, 3])
    labels_r = make_labels(rejected_ids, [1, 1], [4, 4])
    return chosen_ids, labels_c, rejected_ids, labels_r


def test_train_step_follows_the_gradient():
    rng = np.random.default_rng(5)
    policy = BigramPolicy(rng.normal(size=(4, 4)))
    ids_c, lab_c, ids_r, lab_r = toy_data()
    lam, lr = 0.5, 0.3

    def loss():
        return orpo_loss(policy.logits(ids_c), lab_c, policy.logits(ids_r), lab_r, lam=lam)[0]

    numeric = numeric_grad(loss, policy.table)
    before = policy.table.copy()
    orpo_train_step(policy, ids_c, lab_c, ids_r, lab_r, lr, lam)
    np.testing.assert_allclose(policy.table - before, -lr * numeric, atol=1e-7)


def test_odds_ratio_term_separates_chosen_from_rejected():
    ids_c, lab_c, ids_r, lab_r = toy_data()
    ratios, rejected = {}, {}
    for lam in (0.0, 2.0):
        policy = BigramPolicy(np.zeros((4, 4)))
        for _ in range(60):
            orpo_train_step(policy, ids_c, lab_c, ids_r, lab_r, 0.5, lam)
        _, metrics = orpo_loss(policy.logits(ids_c), lab_c, policy.logits(ids_r), lab_r, lam=lam)
        ratios[lam] = metrics["log_odds_ratio"]
        rejected[lam] = metrics["logps/rejected"]
    # SFT alone (λ = 0) separates them less than SFT plus the odds ratio term
    assert ratios[2.0] > ratios[0.0] + 0.8
    assert rejected[2.0] < rejected[0.0] - 0.3
