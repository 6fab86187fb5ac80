"""The checks agent mode may show a model (task.yaml `agent`): the energy score with a
point-mass target, the BrierLM estimate on long patches, and the sampler's frequencies
on one pool."""

import numpy as np
from _calm import (
    brier_inputs,
    close,
    exact_score_inputs,
    pair_term,
    picks_letters,
    prefix_match,
    selection_probabilities,
    target_term,
)


def test_energy_score_visible(outputs):
    for beta, x, mean in exact_score_inputs():
        expected = pair_term(x, beta) - 2 * target_term(x, mean, beta)
        close(outputs["energy_score_exact"][f"beta={beta}"], expected, what=f"beta={beta}")


def test_brier_visible(outputs):
    targets, p1, p2 = brier_inputs(20, 3, 7, 4, 3)
    est = (prefix_match(p1, targets) + prefix_match(p2, targets) - prefix_match(p1, p2)).mean(axis=(0, 1))
    close(outputs["brier_long_patches"]["K=4"], est[:4], rtol=0, atol=1e-6, what="Brier-1..4 at K=4")


def test_temperature_visible(outputs):
    letters = picks_letters(outputs["temperature_sampling"]["skewed@2"])
    probs = selection_probabilities("skewed", 2)
    assert set(letters) <= set(probs)
    assert abs(letters.count("A") / len(letters) - probs["A"]) < 5 * np.sqrt(0.75 * 0.25 / len(letters))
