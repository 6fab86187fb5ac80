"""Tests for top-nσ sampling and the truncation samplers: hand-worked cases, the
temperature invariance of the kept set, and the limits n = 0 and large n."""

import numpy as np
import pytest
from top_nsigma import (
    apply_temperature,
    generate,
    logit_statistics,
    masked_softmax,
    min_p_mask,
    sample_from_probs,
    sample_next_token,
    top_k_mask,
    top_nsigma_mask,
    top_nsigma_probs,
    top_p_mask,
)

NEG = -np.inf


def plain_softmax(x):
    e = np.exp(x - np.max(x))
    return e / e.sum()


# ---- temperature and statistics ----------------------------------------------------


def test_temperature_hand():
    np.testing.assert_allclose(apply_temperature(np.array([2.0, -4.0, 0.5]), 2.0), [1.0, -2.0, 0.25])
    np.testing.assert_allclose(apply_temperature(np.array([[1.0], [3.0]]), 0.5), [[2.0], [6.0]])


def test_statistics_hand():
    M, sigma = logit_statistics(np.array([1.0, 2.0, 3.0, 6.0]))
    # mean 3, variance (4 + 1 + 0 + 9) / 4 = 3.5
    np.testing.assert_allclose(M, [6.0])
    np.testing.assert_allclose(sigma, [np.sqrt(3.5)])


def test_statistics_population_std():
    _, sigma = logit_statistics(np.array([0.0, 2.0]))
    np.testing.assert_allclose(sigma, [1.0])


def test_statistics_ignore_excluded_tokens():
    M, sigma = logit_statistics(np.array([NEG, 1.0, 2.0, NEG, 3.0, 6.0, NEG]))
    np.testing.assert_allclose(M, [6.0])
    np.testing.assert_allclose(sigma, [np.sqrt(3.5)])


def test_statistics_batched():
    logits = np.array([[1.0, 2.0, 3.0, 6.0], [5.0, 5.0, NEG, 1.0], [-2.0, 0.0, 2.0, 4.0]])
    M, sigma = logit_statistics(logits)
    assert M.shape == (3, 1) and sigma.shape == (3, 1)
    np.testing.assert_allclose(M[:, 0], [6.0, 5.0, 4.0])
    np.testing.assert_allclose(sigma[:, 0], [np.sqrt(3.5), np.sqrt(32.0 / 9.0), np.sqrt(5.0)])


# ---- the top-nσ mask ------------------------------------------------------------------


def test_mask_hand():
    logits = np.array([1.0, 2.0, 3.0, 6.0])  # M = 6, σ = √3.5 ≈ 1.871
    np.testing.assert_array_equal(top_nsigma_mask(logits, 1.0), [False, False, False, True])
    np.testing.assert_array_equal(top_nsigma_mask(logits, 1.7), [False, False, True, True])
    np.testing.assert_array_equal(top_nsigma_mask(logits, 2.7), [True, True, True, True])


def test_mask_uses_population_std():
    # σ = √3 (population); with the sample std (2) n = 2 would keep everything
    np.testing.assert_array_equal(top_nsigma_mask(np.array([0.0, 0.0, 0.0, 4.0]), 2.0), [False, False, False, True])


def test_mask_threshold_inclusive():
    # M = 2, σ = 1: with n = 2 the threshold is exactly 0 and the token at 0 is kept
    np.testing.assert_array_equal(top_nsigma_mask(np.array([0.0, 2.0]), 2.0), [True, True])
    np.testing.assert_array_equal(top_nsigma_mask(np.array([0.0, 2.0]), 1.999), [False, True])


def test_mask_n_zero_keeps_only_maxima():
    logits = np.array([0.3, 1.5, -2.0, 1.5, 0.0])
    np.testing.assert_array_equal(top_nsigma_mask(logits, 0.0), [False, True, False, True, False])


def test_mask_excluded_tokens_stay_excluded():
    logits = np.array([NEG, 1.0, 2.0, 3.0, 6.0, NEG])
    np.testing.assert_array_equal(top_nsigma_mask(logits, 1.7), [False, False, False, True, True, False])
    np.testing.assert_array_equal(top_nsigma_mask(logits, 50.0), [False, True, True, True, True, False])


# ---- masked softmax and the top-nσ distribution ---------------------------------------


def test_masked_softmax_hand():
    p = masked_softmax(np.array([0.0, np.log(3.0), 5.0]), np.array([True, True, False]))
    np.testing.assert_allclose(p, [0.25, 0.75, 0.0])
    p = masked_softmax(np.array([[1000.0, 1000.0 + np.log(3.0)], [-3.0, 7.0]]), np.array([[True, True], [True, False]]))
    np.testing.assert_allclose(p, [[0.25, 0.75], [1.0, 0.0]])


def test_probs_hand_with_temperature():
    # scaled logits [0, 1]: σ = 1/2, threshold 1 - 2 * 1/2 = 0 keeps both
    p = top_nsigma_probs(np.array([0.0, 2.0]), n=2.0, temperature=2.0)
    np.testing.assert_allclose(p, [1.0 / (1.0 + np.e), np.e / (1.0 + np.e)])
    # n = 1 keeps only the maximum
    np.testing.assert_allclose(top_nsigma_probs(np.array([0.0, 2.0]), n=1.0, temperature=2.0), [0.0, 1.0])


def test_probs_hand_three_tokens():
    logits = np.array([1.0, 2.0, 3.0, 6.0])
    p = top_nsigma_probs(logits, n=1.7, temperature=0.5)
    # kept {3, 6}; softmax of [6, 12] over the kept pair
    np.testing.assert_allclose(p, [0.0, 0.0, 1.0 / (1.0 + np.exp(6.0)), 1.0 / (1.0 + np.exp(-6.0))])


@pytest.mark.parametrize("n", [0.5, 1.0, 1.5])
def test_kept_set_invariant_to_temperature(n):
    rng = np.random.default_rng(0)
    logits = np.concatenate([rng.normal(size=200), [6.0, 5.2, 4.8]])
    supports = [top_nsigma_probs(logits, n, T) > 0 for T in (0.25, 0.7, 1.0, 3.0, 10.0)]
    for s in supports[1:]:
        np.testing.assert_array_equal(s, supports[0])
    p = top_nsigma_probs(logits, n, 3.0)
    keep = supports[0]
    np.testing.assert_allclose(p[keep], plain_softmax(logits[keep] / 3.0), rtol=1e-10)


def test_min_p_support_depends_on_temperature():
    # the contrast drawn by the paper: min-p's kept set grows with the temperature
    logits = np.array([4.0, 3.0, 1.0, 0.0, -1.0])
    assert min_p_mask(logits / 0.5, 0.1).sum() == 2
    assert min_p_mask(logits / 4.0, 0.1).sum() == 5
    assert top_nsigma_mask(logits / 0.5, 1.0).sum() == top_nsigma_mask(logits / 4.0, 1.0).sum()


def test_large_n_is_plain_temperature_sampling():
    rng = np.random.default_rng(1)
    logits = rng.normal(size=50) * 3
    # max − min ≤ √(2V) σ, so n = √(2V) keeps every token
    p = top_nsigma_probs(logits, n=np.sqrt(100.0), temperature=1.7)
    np.testing.assert_allclose(p, plain_softmax(logits / 1.7), rtol=1e-10)


def test_n_zero_is_greedy():
    logits = np.array([0.5, 2.5, -1.0, 2.0])
    for T in (0.1, 1.0, 5.0):
        np.testing.assert_array_equal(top_nsigma_probs(logits, n=0.0, temperature=T), [0.0, 1.0, 0.0, 0.0])


def test_probs_shift_invariant_and_batched():
    rng = np.random.default_rng(2)
    logits = rng.normal(size=(3, 20)) * 2
    p = top_nsigma_probs(logits, 1.0, 0.8)
    np.testing.assert_allclose(p.sum(axis=1), 1.0)
    np.testing.assert_allclose(top_nsigma_probs(logits + 100.0, 1.0, 0.8), p, rtol=1e-9, atol=1e-15)
    for row in range(3):
        np.testing.assert_allclose(p[row], top_nsigma_probs(logits[row], 1.0, 0.8))


# ---- truncation baselines ------------------------------------------------------------


def test_top_k_hand():
    np.testing.assert_array_equal(top_k_mask(np.array([3.0, 1.0, 2.0, 5.0]), 2), [True, False, False, True])
    np.testing.assert_array_equal(top_k_mask(np.array([3.0, 1.0, 2.0, 5.0]), 3), [True, False, True, True])
    np.testing.assert_array_equal(top_k_mask(np.array([1.0, 2.0, 2.0, 0.0]), 1), [False, True, True, False])
    np.testing.assert_array_equal(top_k_mask(np.array([[1.0, 0.0, 4.0], [2.0, 3.0, -1.0]]), 1), [[False, False, True], [False, True, False]])


def test_top_p_hand():
    logits = np.log(np.array([0.5, 0.2, 0.3]))
    np.testing.assert_array_equal(top_p_mask(logits, 0.45), [True, False, False])
    np.testing.assert_array_equal(top_p_mask(logits, 0.55), [True, False, True])
    np.testing.assert_array_equal(top_p_mask(logits, 0.85), [True, True, True])


def test_top_p_batched():
    logits = np.log(np.array([[0.1, 0.6, 0.3], [0.25, 0.35, 0.4]]))
    np.testing.assert_array_equal(top_p_mask(logits, 0.65), [[False, True, True], [False, True, True]])
    np.testing.assert_array_equal(top_p_mask(logits, 0.3), [[False, True, False], [False, False, True]])


def test_min_p_hand():
    logits = np.log(np.array([0.5, 0.2, 0.3]))
    np.testing.assert_array_equal(min_p_mask(logits, 0.5), [True, False, True])
    np.testing.assert_array_equal(min_p_mask(logits, 0.3), [True, True, True])
    np.testing.assert_array_equal(min_p_mask(logits, 0.7), [True, False, False])


# ---- sampling ------------------------------------------------------------------------


def test_inverse_cdf_hand():
    p = np.array([0.25, 0.0, 0.5, 0.25])
    assert [sample_from_probs(p, u) for u in (0.0, 0.2, 0.25, 0.5, 0.74, 0.75, 0.99)] == [0, 0, 2, 2, 2, 3, 3]


def test_inverse_cdf_unnormalised_and_frequencies():
    assert sample_from_probs(np.array([1.0, 0.0, 2.0, 1.0]), 0.5) == 2
    assert sample_from_probs(np.array([0.0, 0.0, 3.0]), 0.0) == 2
    p = np.array([0.1, 0.4, 0.2, 0.3])
    draws = [sample_from_probs(p, u) for u in (np.arange(1000) + 0.5) / 1000]
    np.testing.assert_allclose(np.bincount(draws, minlength=4) / 1000, p)


def test_generate_greedy():
    table = np.array([[0.0, 3.0, 1.0], [0.0, 0.0, 5.0], [4.0, 1.0, 0.0]])
    assert generate(table, 0, 5, np.full(5, 0.9), n=0.0) == [0, 1, 2, 0, 1, 2]


def test_generate_hand():
    # from token 0 with n large the distribution is softmax([0, ln 3]) = [1/4, 3/4]
    table = np.array([[0.0, np.log(3.0)], [0.0, 0.0]])
    # from 1 both tokens have probability 1/2
    assert generate(table, 0, 4, np.array([0.2, 0.3, 0.7, 0.1]), n=10.0) == [0, 0, 1, 1, 0]
    # n = 1: from 0 only token 1 is kept (σ = ln3 / 2); from 1 both are maxima
    assert generate(table, 0, 3, np.array([0.2, 0.3, 0.7]), n=1.0) == [0, 1, 0, 1]


# ---- the sampler pipeline -------------------------------------------------------------

# probabilities at T = 1: [0.1, 0.2, 0.3, 0.4]
PIPE = np.log(np.array([0.1, 0.2, 0.3, 0.4]))


def test_pipeline_none_is_plain_sampling():
    # cdf [0.1, 0.3, 0.6, 1.0]
    assert [sample_next_token(PIPE, u, method="none") for u in (0.05, 0.15, 0.5, 0.65)] == [0, 1, 2, 3]
    # T = 1/2 squares and renormalises: [1, 4, 9, 16] / 30, cdf [1, 5, 14, 30] / 30
    assert [sample_next_token(PIPE, u, method="none", temperature=0.5) for u in (0.02, 0.1, 0.4, 0.5)] == [0, 1, 2, 3]


def test_pipeline_top_k_and_top_p():
    # top-2 keeps {0.3, 0.4}: cdf [3/7, 1]
    assert [sample_next_token(PIPE, u, method="top_k", k=2) for u in (0.0, 0.42, 0.43)] == [2, 2, 3]
    # top-p 0.65 keeps {0.4, 0.3}; at T = 1/2 the kept probabilities are [9, 16] / 25
    assert [sample_next_token(PIPE, u, method="top_p", p=0.65, temperature=0.5) for u in (0.35, 0.37)] == [2, 3]
    # the nucleus is taken on the scaled distribution: p = 0.5 keeps {0.4, 0.3} at T = 1 but
    # only the top token at T = 1/2 (its probability 16/30 already exceeds 0.5)
    assert sample_next_token(PIPE, 0.0, method="top_p", p=0.5) == 2
    assert sample_next_token(PIPE, 0.0, method="top_p", p=0.5, temperature=0.5) == 3


def test_pipeline_min_p_uses_scaled_logits():
    # at T = 1 p_base = 0.5 keeps {0.2, 0.3, 0.4}; at T = 1/2 (probs ∝ [1, 4, 9, 16]) only {9, 16}
    assert sample_next_token(PIPE, 0.0, method="min_p", p_base=0.5) == 1
    assert sample_next_token(PIPE, 0.0, method="min_p", p_base=0.5, temperature=0.5) == 2


def test_pipeline_top_nsigma():
    logits = np.array([1.0, 2.0, 3.0, 6.0])
    # n = 1.7 keeps {3, 6}; at T = 1/2 their probabilities are [1, e^6] / (1 + e^6)
    cut = 1.0 / (1.0 + np.exp(6.0))
    assert sample_next_token(logits, cut * 0.99, n=1.7, temperature=0.5) == 2
    assert sample_next_token(logits, cut * 1.01, n=1.7, temperature=0.5) == 3
    assert sample_next_token(logits, 0.0, n=2.7) == 0
    with pytest.raises(ValueError):
        sample_next_token(logits, 0.5, method="bogus")
