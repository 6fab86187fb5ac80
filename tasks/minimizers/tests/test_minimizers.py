"""Tests for minimizer schemes: hand-worked windows and contexts, de Bruijn
properties, the charged-context / cyclic de Bruijn equivalence, the random
minimizer's 2/(w+1), and the forward-scheme lower bound."""

import itertools

import numpy as np
import pytest
from minimizers import (
    best_order,
    charged_contexts,
    de_bruijn,
    density_lower_bound,
    exact_density,
    kmer_codes,
    minimizer_positions,
    particular_density,
    random_minimizer_density,
    random_order,
)


def cyclic_density(w, k, order, sigma):
    """Density on the cyclic de Bruijn sequence of order w + k: every context once."""
    db = de_bruijn(sigma, w + k)
    L = len(db)
    ext = np.concatenate([db, db[: w + k - 1]])
    pos = minimizer_positions(ext, w, k, order, sigma)[:L] % L
    return len(np.unique(pos)) / L


def test_kmer_codes_hand_computed():
    seq = np.array([0, 1, 2, 3, 1])
    np.testing.assert_array_equal(kmer_codes(seq, 2, 4), [1, 6, 11, 13])
    np.testing.assert_array_equal(kmer_codes(seq, 3, 4), [6, 27, 45])
    np.testing.assert_array_equal(kmer_codes(seq, 1, 4), seq)
    batch = np.array([[1, 0, 1], [1, 1, 0]])
    np.testing.assert_array_equal(kmer_codes(batch, 2, 2), [[2, 1], [3, 2]])
    np.testing.assert_array_equal(kmer_codes(np.array([2, 0, 1]), 3, 3), [19])


def test_random_order_is_uniform_permutation():
    rng = np.random.default_rng(0)
    order = random_order(3, 2, rng)
    np.testing.assert_array_equal(np.sort(order), np.arange(9))
    ranks0 = [random_order(2, 3, rng)[0] for _ in range(4000)]
    assert np.mean(ranks0) == pytest.approx(3.5, abs=0.12)
    assert len({tuple(random_order(2, 3, rng)) for _ in range(50)}) > 40


def test_window_minimizers_hand_computed():
    # sigma = 4, k = 2: seq 3 1 2 0 3 3 1 -> codes 13, 6, 8, 3, 15, 13
    seq = np.array([3, 1, 2, 0, 3, 3, 1])
    lex = np.arange(16)
    # windows of w = 3 k-mers: (13,6,8)->1, (6,8,3)->3, (8,3,15)->3, (3,15,13)->3
    np.testing.assert_array_equal(minimizer_positions(seq, 3, 2, lex, 4), [1, 3, 3, 3])
    rev = lex[::-1].copy()  # largest code is smallest
    # (13,6,8)->0, (6,8,3)->2, (8,3,15)->4, (3,15,13)->4
    np.testing.assert_array_equal(minimizer_positions(seq, 3, 2, rev, 4), [0, 2, 4, 4])
    # ties go to the leftmost k-mer
    np.testing.assert_array_equal(minimizer_positions(np.array([1, 1, 1, 1]), 2, 1, np.arange(2), 2), [0, 1, 2])


def test_particular_density_hand_computed():
    seq = np.array([3, 1, 2, 0, 3, 3, 1])
    # selected {1, 3} among 6 k-mers; with the reversed order {0, 2, 4}
    assert particular_density(seq, 3, 2, np.arange(16), 4) == pytest.approx(2 / 6)
    assert particular_density(seq, 3, 2, np.arange(16)[::-1].copy(), 4) == pytest.approx(3 / 6)
    assert particular_density(seq, 1, 2, np.arange(16), 4) == pytest.approx(1.0)


def test_random_minimizer_density_on_random_sequence():
    rng = np.random.default_rng(1)
    sigma, k = 4, 8
    seq = rng.integers(0, sigma, size=60_000)
    for w in (4, 9):
        d = particular_density(seq, w, k, random_order(sigma, k, rng), sigma)
        assert d == pytest.approx(random_minimizer_density(w), rel=0.04)
    assert random_minimizer_density(4) == pytest.approx(0.4)
    assert random_minimizer_density(1) == pytest.approx(1.0)


def test_de_bruijn_sequences():
    np.testing.assert_array_equal(de_bruijn(2, 3), [0, 0, 0, 1, 0, 1, 1, 1])
    np.testing.assert_array_equal(de_bruijn(3, 2), [0, 0, 1, 0, 2, 1, 1, 2, 2])
    for sigma, n in [(2, 5), (3, 3), (4, 2)]:
        db = de_bruijn(sigma, n)
        assert len(db) == sigma**n
        ext = np.concatenate([db, db[: n - 1]])
        windows = {tuple(ext[i : i + n]) for i in range(len(db))}
        assert len(windows) == sigma**n


def test_charged_contexts_hand_computed():
    # w = 2, k = 1, binary, 0 < 1: context abc, first window (a, b), second (b, c)
    contexts = np.array(list(itertools.product([0, 1], repeat=3)))
    charged = charged_contexts(contexts, 2, 1, np.arange(2), 2)
    # 000 001 010 011 100 101 110 111: only 100 and 101 keep the minimizer (position 1)
    np.testing.assert_array_equal(charged, [True, True, True, True, False, False, True, True])
    # w = 3, k = 2, sigma = 4, lexicographic: 3 1 2 0 3 -> codes 13, 6, 8, 3 -> min moves 1 -> 3
    c = np.array([[3, 1, 2, 0, 3], [0, 1, 2, 3, 3], [2, 0, 3, 1, 1]])
    # second: codes 1, 6, 11, 15 -> first window (1,6,11) picks 0, second (6,11,15) picks 1: charged
    # third: 8, 3, 13, 5 -> first (8,3,13) -> 1, second (3,13,5) -> 1: not charged
    np.testing.assert_array_equal(charged_contexts(c, 3, 2, np.arange(16), 4), [True, True, False])


def test_exact_density_hand_and_trivial_cases():
    assert exact_density(2, 1, np.arange(2), 2) == pytest.approx(6 / 8)
    assert exact_density(1, 3, np.arange(8), 2) == pytest.approx(1.0)
    # for k = 1 every order is a relabelling of the alphabet: the same density
    d = {round(exact_density(2, 1, np.array(p), 3), 12) for p in itertools.permutations(range(3))}
    assert len(d) == 1


def test_exact_density_equals_cyclic_de_bruijn_density():
    rng = np.random.default_rng(2)
    for w, k, sigma in [(3, 2, 2), (2, 3, 2), (4, 2, 2), (2, 2, 3)]:
        order = random_order(sigma, k, rng)
        assert exact_density(w, k, order, sigma) == pytest.approx(cyclic_density(w, k, order, sigma))


def test_density_lower_bound_values_and_validity():
    assert density_lower_bound(2, 2) == pytest.approx(0.5)
    assert density_lower_bound(3, 2) == pytest.approx(0.4)
    assert density_lower_bound(4, 5) == pytest.approx(1 / 3)
    assert density_lower_bound(5, 6) == pytest.approx(3 / 11)
    assert density_lower_bound(1, 4) == pytest.approx(1.0)
    for w in range(1, 8):
        for k in range(1, 12):
            assert 1 / w <= density_lower_bound(w, k) <= 1.0
    rng = np.random.default_rng(3)
    for w, k, sigma in [(2, 2, 2), (3, 2, 2), (4, 3, 2), (3, 1, 4), (2, 2, 3)]:
        for _ in range(3):
            assert exact_density(w, k, random_order(sigma, k, rng), sigma) >= density_lower_bound(w, k) - 1e-12


def test_exhaustive_minimum_density():
    rng = np.random.default_rng(4)
    for w, k, sigma in [(2, 2, 2), (3, 2, 2), (4, 2, 2)]:
        d, order = best_order(w, k, sigma)
        np.testing.assert_array_equal(np.sort(order), np.arange(sigma**k))
        assert exact_density(w, k, order, sigma) == pytest.approx(d)
        assert d >= density_lower_bound(w, k) - 1e-12
        assert d <= exact_density(w, k, np.arange(sigma**k), sigma)
        assert all(d <= exact_density(w, k, random_order(sigma, k, rng), sigma) + 1e-12 for _ in range(10))
    # k = 1: all orders tie, so the first permutation (the identity) is returned
    d, order = best_order(2, 1, 3)
    np.testing.assert_array_equal(order, [0, 1, 2])
    assert d == pytest.approx(exact_density(2, 1, np.arange(3), 3))
