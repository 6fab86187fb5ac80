"""Checks for top-nσ sampling and the truncation samplers over the cases' outputs:
hand-worked values, the temperature invariance of the kept set, the limits n = 0 and
large n, and every output compared with the reference implementation's."""

import os

import numpy as np
import pytest
from _close import assert_tree_close

# RCB_SEED varies every random input; rcb validate runs several seeds.
SEED = 1000 * int(os.environ.get("RCB_SEED", "0"))


def plain_softmax(x):
    e = np.exp(x - np.max(x))
    return e / e.sum()


# ---- temperature and statistics ----------------------------------------------------


def test_temperature_hand(outputs, reference):
    out = outputs["temperature"]
    np.testing.assert_allclose(out["vector"], [1.0, -2.0, 0.25])
    np.testing.assert_allclose(out["column"], [[2.0], [6.0]])
    assert np.shape(out["column"]) == (2, 1)
    assert_tree_close(out, reference["temperature"])


def test_statistics_hand(outputs, reference):
    out = outputs["statistics_hand"]
    # mean 3, variance (4 + 1 + 0 + 9) / 4 = 3.5
    np.testing.assert_allclose(out["M"], [6.0])
    np.testing.assert_allclose(out["sigma"], [np.sqrt(3.5)])
    assert_tree_close(out, reference["statistics_hand"])


def test_statistics_population_std(outputs, reference):
    out = outputs["statistics_population_std"]
    np.testing.assert_allclose(out["sigma"], [1.0])
    assert_tree_close(out, reference["statistics_population_std"])


def test_statistics_ignore_excluded_tokens(outputs, reference):
    out = outputs["statistics_excluded"]
    np.testing.assert_allclose(out["M"], [6.0])
    np.testing.assert_allclose(out["sigma"], [np.sqrt(3.5)])
    assert_tree_close(out, reference["statistics_excluded"])


def test_statistics_batched(outputs, reference):
    out = outputs["statistics_batched"]
    M, sigma = np.asarray(out["M"]), np.asarray(out["sigma"])
    assert M.shape == (3, 1) and sigma.shape == (3, 1)
    np.testing.assert_allclose(M[:, 0], [6.0, 5.0, 4.0])
    np.testing.assert_allclose(sigma[:, 0], [np.sqrt(3.5), np.sqrt(32.0 / 9.0), np.sqrt(5.0)])
    assert_tree_close(out, reference["statistics_batched"])


# ---- the top-nσ mask ------------------------------------------------------------------


def test_mask_hand(outputs, reference):
    out = outputs["mask_hand"]  # logits [1, 2, 3, 6]: M = 6, σ = √3.5 ≈ 1.871; n = 1, 1.7, 2.7
    np.testing.assert_array_equal(out[0], [False, False, False, True])
    np.testing.assert_array_equal(out[1], [False, False, True, True])
    np.testing.assert_array_equal(out[2], [True, True, True, True])
    assert_tree_close(out, reference["mask_hand"])


def test_mask_uses_population_std(outputs, reference):
    # σ = √3 (population); with the sample std (2) n = 2 would keep everything
    out = outputs["mask_population_std"]
    np.testing.assert_array_equal(out, [False, False, False, True])
    assert_tree_close(out, reference["mask_population_std"])


def test_mask_threshold_inclusive(outputs, reference):
    # M = 2, σ = 1: with n = 2 the threshold is exactly 0 and the token at 0 is kept
    out = outputs["mask_threshold"]
    np.testing.assert_array_equal(out[0], [True, True])
    np.testing.assert_array_equal(out[1], [False, True])
    assert_tree_close(out, reference["mask_threshold"])


def test_mask_n_zero_keeps_only_maxima(outputs, reference):
    out = outputs["mask_n_zero"]
    np.testing.assert_array_equal(out, [False, True, False, True, False])
    assert_tree_close(out, reference["mask_n_zero"])


def test_mask_excluded_tokens_stay_excluded(outputs, reference):
    out = outputs["mask_excluded"]  # n = 1.7, then 50
    np.testing.assert_array_equal(out[0], [False, False, False, True, True, False])
    np.testing.assert_array_equal(out[1], [False, True, True, True, True, False])
    assert_tree_close(out, reference["mask_excluded"])


# ---- masked softmax and the top-nσ distribution ---------------------------------------


def test_masked_softmax_hand(outputs, reference):
    out = outputs["masked_softmax"]
    np.testing.assert_allclose(out[0], [0.25, 0.75, 0.0])
    np.testing.assert_allclose(out[1], [[0.25, 0.75], [1.0, 0.0]])
    assert_tree_close(out, reference["masked_softmax"])


def test_probs_hand_with_temperature(outputs, reference):
    out = outputs["probs_with_temperature"]
    # scaled logits [0, 1]: σ = 1/2, threshold 1 - 2 * 1/2 = 0 keeps both
    np.testing.assert_allclose(out[0], [1.0 / (1.0 + np.e), np.e / (1.0 + np.e)])
    # n = 1 keeps only the maximum
    np.testing.assert_allclose(out[1], [0.0, 1.0])
    assert_tree_close(out, reference["probs_with_temperature"])


def test_probs_hand_three_tokens(outputs, reference):
    out = outputs["probs_three_tokens"]
    # kept {3, 6}; softmax of [6, 12] over the kept pair
    np.testing.assert_allclose(out, [0.0, 0.0, 1.0 / (1.0 + np.exp(6.0)), 1.0 / (1.0 + np.exp(-6.0))])
    assert_tree_close(out, reference["probs_three_tokens"])


@pytest.mark.parametrize("n", [0.5, 1.0, 1.5])
def test_kept_set_invariant_to_temperature(outputs, reference, n):
    rng = np.random.default_rng(SEED + 0)
    logits = np.concatenate([rng.normal(size=200), [6.0, 5.2, 4.8]])
    probs = outputs["kept_set_temperatures"][str(n)]  # at T = 0.25, 0.7, 1, 3, 10
    assert len(probs) == 5
    supports = [np.asarray(p) > 0 for p in probs]
    for s in supports[1:]:
        np.testing.assert_array_equal(s, supports[0])
    keep = supports[0]
    np.testing.assert_allclose(np.asarray(probs[3])[keep], plain_softmax(logits[keep] / 3.0), rtol=1e-10)
    assert_tree_close(probs, reference["kept_set_temperatures"][str(n)])


def test_min_p_support_depends_on_temperature(outputs, reference):
    # the contrast drawn by the paper: min-p's kept set grows with the temperature
    out = outputs["min_p_against_top_nsigma"]
    assert np.sum(out["min_p_cold"]) == 2
    assert np.sum(out["min_p_hot"]) == 5
    assert np.sum(out["top_nsigma_cold"]) == np.sum(out["top_nsigma_hot"])
    assert_tree_close(out, reference["min_p_against_top_nsigma"])


def test_large_n_is_plain_temperature_sampling(outputs, reference):
    rng = np.random.default_rng(SEED + 1)
    logits = rng.normal(size=50) * 3
    # max − min ≤ √(2V) σ, so n = √(2V) keeps every token
    out = outputs["large_n"]
    np.testing.assert_allclose(out, plain_softmax(logits / 1.7), rtol=1e-10)
    assert_tree_close(out, reference["large_n"])


def test_n_zero_is_greedy(outputs, reference):
    out = outputs["n_zero_probs"]  # T = 0.1, 1, 5
    assert len(out) == 3
    for p in out:
        np.testing.assert_array_equal(p, [0.0, 1.0, 0.0, 0.0])
    assert_tree_close(out, reference["n_zero_probs"])


def test_probs_shift_invariant_and_batched(outputs, reference):
    out = outputs["probs_shift_and_batch"]
    p = np.asarray(out["batch"])
    assert p.shape == (3, 20)
    np.testing.assert_allclose(p.sum(axis=1), 1.0)
    np.testing.assert_allclose(out["shifted"], p, rtol=1e-9, atol=1e-15)
    assert len(out["rows"]) == 3
    for row in range(3):
        np.testing.assert_allclose(p[row], out["rows"][row])
    assert_tree_close(out, reference["probs_shift_and_batch"])


# ---- truncation baselines ------------------------------------------------------------


def test_top_k_hand(outputs, reference):
    out = outputs["top_k"]
    np.testing.assert_array_equal(out[0], [True, False, False, True])
    np.testing.assert_array_equal(out[1], [True, False, True, True])
    np.testing.assert_array_equal(out[2], [False, True, True, False])
    np.testing.assert_array_equal(out[3], [[False, False, True], [False, True, False]])
    assert_tree_close(out, reference["top_k"])


def test_top_p_hand(outputs, reference):
    out = outputs["top_p"]  # probabilities [0.5, 0.2, 0.3]; p = 0.45, 0.55, 0.85
    np.testing.assert_array_equal(out[0], [True, False, False])
    np.testing.assert_array_equal(out[1], [True, False, True])
    np.testing.assert_array_equal(out[2], [True, True, True])
    assert_tree_close(out, reference["top_p"])


def test_top_p_batched(outputs, reference):
    out = outputs["top_p_batched"]  # p = 0.65, then 0.3
    np.testing.assert_array_equal(out[0], [[False, True, True], [False, True, True]])
    np.testing.assert_array_equal(out[1], [[False, True, False], [False, False, True]])
    assert_tree_close(out, reference["top_p_batched"])


def test_min_p_hand(outputs, reference):
    out = outputs["min_p"]  # probabilities [0.5, 0.2, 0.3]; p_base = 0.5, 0.3, 0.7
    np.testing.assert_array_equal(out[0], [True, False, True])
    np.testing.assert_array_equal(out[1], [True, True, True])
    np.testing.assert_array_equal(out[2], [True, False, False])
    assert_tree_close(out, reference["min_p"])


# ---- sampling ------------------------------------------------------------------------


def test_inverse_cdf_hand(outputs, reference):
    out = outputs["inverse_cdf"]  # p = [0.25, 0, 0.5, 0.25]
    assert out == [0, 0, 2, 2, 2, 3, 3]
    assert_tree_close(out, reference["inverse_cdf"])


def test_inverse_cdf_unnormalised_and_frequencies(outputs, reference):
    out = outputs["inverse_cdf_unnormalised"]
    assert out["unnormalised"] == 2
    assert out["single"] == 2
    draws = np.asarray(out["grid"])
    assert draws.shape == (1000,) and draws.dtype.kind in "iu"
    np.testing.assert_allclose(np.bincount(draws, minlength=4) / 1000, [0.1, 0.4, 0.2, 0.3])
    assert_tree_close(out, reference["inverse_cdf_unnormalised"])


def test_generate_greedy(outputs, reference):
    out = outputs["generate_greedy"]
    assert out == [0, 1, 2, 0, 1, 2]
    assert_tree_close(out, reference["generate_greedy"])


def test_generate_hand(outputs, reference):
    out = outputs["generate_hand"]
    # from token 0 with n large the distribution is softmax([0, ln 3]) = [1/4, 3/4];
    # from 1 both tokens have probability 1/2
    assert out["n_large"] == [0, 0, 1, 1, 0]
    # n = 1: from 0 only token 1 is kept (σ = ln3 / 2); from 1 both are maxima
    assert out["n_one"] == [0, 1, 0, 1]
    assert_tree_close(out, reference["generate_hand"])


# ---- the sampler pipeline -------------------------------------------------------------
# PIPE: probabilities at T = 1 are [0.1, 0.2, 0.3, 0.4]


def test_pipeline_none_is_plain_sampling(outputs, reference):
    out = outputs["pipeline_none"]
    # cdf [0.1, 0.3, 0.6, 1.0]
    assert out["T1"] == [0, 1, 2, 3]
    # T = 1/2 squares and renormalises: [1, 4, 9, 16] / 30, cdf [1, 5, 14, 30] / 30
    assert out["T05"] == [0, 1, 2, 3]
    assert_tree_close(out, reference["pipeline_none"])


def test_pipeline_top_k_and_top_p(outputs, reference):
    out = outputs["pipeline_top_k_top_p"]
    # top-2 keeps {0.3, 0.4}: cdf [3/7, 1]
    assert out["top_k"] == [2, 2, 3]
    # top-p 0.65 keeps {0.4, 0.3}; at T = 1/2 the kept probabilities are [9, 16] / 25
    assert out["top_p_T05"] == [2, 3]
    # the nucleus is taken on the scaled distribution: p = 0.5 keeps {0.4, 0.3} at T = 1 but
    # only the top token at T = 1/2 (its probability 16/30 already exceeds 0.5)
    assert out["top_p_05_T1"] == 2
    assert out["top_p_05_T05"] == 3
    assert_tree_close(out, reference["pipeline_top_k_top_p"])


def test_pipeline_min_p_uses_scaled_logits(outputs, reference):
    out = outputs["pipeline_min_p"]
    # at T = 1 p_base = 0.5 keeps {0.2, 0.3, 0.4}; at T = 1/2 (probs ∝ [1, 4, 9, 16]) only {9, 16}
    assert out["T1"] == 1
    assert out["T05"] == 2
    assert_tree_close(out, reference["pipeline_min_p"])


def test_pipeline_top_nsigma(outputs, reference):
    out = outputs["pipeline_top_nsigma"]
    # logits [1, 2, 3, 6]: n = 1.7 keeps {3, 6}; at T = 1/2 their probabilities are
    # [1, e^6] / (1 + e^6), and u is just below, then just above, the first
    assert out["below_cut"] == 2
    assert out["above_cut"] == 3
    assert out["n_wide"] == 0
    assert_tree_close(out, reference["pipeline_top_nsigma"])
    classes = outputs["pipeline_unknown_method"]
    assert isinstance(classes, list) and "ValueError" in classes, (
        f"an unknown method must raise ValueError; raised: {classes}"
    )


# ---- everything on random logits ----------------------------------------------------


def test_random_logits_match_reference(outputs, reference):
    """Every function on seeded random logits against the reference: masks and token ids
    equal, probabilities within a rounding error."""
    assert_tree_close(outputs["random_logits"], reference["random_logits"])
