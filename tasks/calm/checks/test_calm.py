"""Checks for CALM. Each compares what the cases computed with the paper's formulas written
out in numpy (_calm.py) and with the reference's outputs.

Tolerances: everything runs in float64 except the BrierLM estimates (means of 0/1
indicators, float32 in the authors' code) and the autoencoder's training-mode encoder
input (cast to bfloat16 by the authors' visible code, the same for every candidate).
Reordered float64 arithmetic moves the values below 1e-12 relative; the tolerances are
1e-10 against closed forms and 1e-8 against the reference where a tiny Transformer or an
autoencoder sits in between.

Comparisons with the reference's outputs under the same torch seed are made only where
a correct implementation must draw its random numbers in the same order: the noise of
the generative head is one uniform draw shaped like the hidden states (the visible
energy score reads the samples along the first axis, which fixes how the hidden states
are repeated), and the autoencoder draws its token mask, then the posterior noise, then
the latent dropout, one after the other as the data flows. The energy score's Gaussian
targets are checked by their statistics instead.
"""

import numpy as np
from _calm import (
    AE_MEANS,
    LETTER_TOKENS,
    POOL_OFFSETS,
    POOLS,
    REPEATS,
    brier_inputs,
    clamped_kl,
    close,
    cross_entropy,
    exact_score_inputs,
    gated_block,
    generator,
    pair_term,
    picks_letters,
    pool_letters,
    prefix_match,
    rng,
    sampled_score_inputs,
    selection_probabilities,
    target_term,
    token_batch,
    windows,
)

# ---- the generative head ------------------------------------------------------------


def test_gated_block_closed_form(outputs, reference):
    ref = reference["gated_block"]
    r = rng(1)
    x = r.normal(size=(3, 5, 12))
    y = r.normal(size=(3, 5, 12))
    expected = gated_block(ref["weights"], "", x, y)
    close(ref["out"], expected, what="reference block (sanity)")
    close(outputs["gated_block"]["out"], expected, what="block output")


def test_generator_sample_closed_form(outputs, reference):
    ref = reference["generator_sample"]
    h = rng(2).normal(size=(4, 3, 16))
    # the noise the reference case drew with the sampler's seed: U(-0.5, 0.5) in one draw
    expected = generator(ref["weights"], h, np.asarray(ref["noise"]), 3)
    close(ref["first"], expected, what="reference sample (sanity)")
    out = outputs["generator_sample"]
    close(out["first"], expected, what="sample with the seeded noise")
    close(out["again"], out["first"], rtol=1e-13, atol=0, what="same seed, same sample")
    close(out["second"], ref["second"], rtol=1e-10, what="the next draw")
    assert np.min(np.abs(np.asarray(out["second"]) - np.asarray(out["first"]))) > 0, "fresh noise per call"


# ---- the energy score ---------------------------------------------------------------


def test_energy_score_point_target(outputs, reference):
    out = outputs["energy_score_exact"]
    for beta, x, mean in exact_score_inputs():
        expected = pair_term(x, beta) - 2 * target_term(x, mean, beta)
        close(out[f"beta={beta}"], expected, what=f"energy score, beta={beta}")
        close(out[f"beta={beta}"], reference["energy_score_exact"][f"beta={beta}"], what=f"reference, beta={beta}")


def test_energy_score_gaussian_target(outputs):
    """The score is the exact pair term minus twice a Monte-Carlo estimate, with 100
    target samples from N(mean, exp(log_std)^2), of E||x_i - y||: that estimate must be
    unbiased and have the spread of a 100-sample mean, whichever random numbers it used."""
    x, mean, log_std = sampled_score_inputs()
    score = np.asarray(outputs["energy_score_sampled"]["score"], dtype=float)
    assert score.shape == (40,)
    estimate = (pair_term(x, 1.0) - score) / 2
    big = np.random.default_rng(12345)
    y = mean[None] + np.exp(log_std)[None] * big.normal(size=(4000, 40, 4))
    per_y = np.linalg.norm(x[:, None] - y[None], axis=-1).mean(axis=0)  # (4000, 40)
    se = per_y.std(axis=0) / np.sqrt(100)
    z = (estimate - per_y.mean(axis=0)) / se
    assert np.max(np.abs(z)) < 5.5, f"target term off by {np.max(np.abs(z)):.1f} standard errors"
    assert np.mean(z**2) < 2.2, f"target term too noisy for 100 samples: mean z^2 = {np.mean(z**2):.2f}"


# ---- the CALM training loss ---------------------------------------------------------


def test_training_loss_matches_reference(outputs, reference):
    out, ref = outputs["training_loss"], reference["training_loss"]
    for key in ("loss", "target_changed", "context_changed"):
        close(out[key], ref[key], rtol=1e-8, what=key)
    close(outputs["training_loss_point_targets"]["loss"], reference["training_loss_point_targets"]["loss"], rtol=1e-8)
    close(
        outputs["training_loss_point_targets"]["two_samples"],
        reference["training_loss_point_targets"]["two_samples"],
        rtol=1e-8,
        what="two samples per step",
    )


def test_training_loss_inputs_and_targets(outputs):
    """Patches 1.. are the targets and patches ..L-1 the inputs: the first patch's labels
    and the last patch's tokens never enter the loss; a target or a context token does."""
    out = outputs["training_loss"]
    close(out["first_label_changed"], out["loss"], rtol=1e-12, what="first patch's labels are not targets")
    close(out["last_input_changed"], out["loss"], rtol=1e-12, what="last patch is not an input")
    assert abs(out["target_changed"] - out["loss"]) > 1e-6 * abs(out["loss"]), "a target patch must count"
    assert abs(out["context_changed"] - out["loss"]) > 1e-6 * abs(out["loss"]), "the context must count"


def test_training_loss_gradients(outputs):
    out = outputs["training_loss"]
    assert out["generator_grad"] > 0, "the energy loss must train the generative head"
    assert out["backbone_grad"] > 0, "... and the Transformer"
    assert out["embed_proj_grad"] > 0, "... and the input compression"
    assert not any(out["ae_grads"]), "the autoencoder is frozen"


def test_eval_forward_matches_reference(outputs, reference):
    """The eval forward decodes sampled latents with an argmax: the reference's smallest
    gap between the two best logits must be far above float64 rounding (no near tie that
    another machine's arithmetic, or a correct reordering, could flip)."""
    for gap in (
        reference["eval_long_patches"]["min_logit_gap"],
        reference["eval_short_patches"]["K=2"]["min_logit_gap"],
        reference["eval_short_patches"]["K=3"]["min_logit_gap"],
    ):
        assert gap > 1e-7, f"a near tie in the reference's decoding (gap {gap:.1e}): choose other inputs"
    out, ref = outputs["eval_long_patches"], reference["eval_long_patches"]
    close(out["loss"], ref["loss"], rtol=1e-8, what="eval loss")
    close(out["brier"], ref["brier"], rtol=0, atol=1e-6, what="Brier-1..4")
    for k in ("K=2", "K=3"):
        close(outputs["eval_short_patches"][k]["loss"], reference["eval_short_patches"][k]["loss"], rtol=1e-8)
        close(outputs["eval_short_patches"][k]["brier"], reference["eval_short_patches"][k]["brier"], atol=1e-6)


# ---- the autoencoder ----------------------------------------------------------------


# The authors' decoder output is cast to float32 (`.float()`, inside the masked code) while
# the cases run in float64: an answer without the cast is as right, so the autoencoder's
# logits and losses are compared at float32 precision (1e-6), not at float64's.


def test_autoencoder_pinned_posterior(outputs, reference):
    """mean = AE_MEANS, log_std = -60, no masking, no dropout: the training objective is
    K * cross-entropy + 0.01 * (per-dimension KL clamped at 60.5, summed)."""
    out, ref = outputs["autoencoder_pinned"], reference["autoencoder_pinned"]
    close(out["eval_logits"], ref["eval_logits"], rtol=1e-6, atol=1e-6, what="eval logits")
    labels = token_batch(10, 3, 2, 4).reshape(-1)
    ce = cross_entropy(ref["eval_logits"], labels)
    close(out["eval_loss"], ce, rtol=1e-6, what="eval loss is the token cross-entropy")
    close(out["train_logits"], out["eval_logits"], rtol=1e-9, atol=1e-9, what="no dropout at p = 0")
    kl = clamped_kl(AE_MEANS, np.full(6, -60.0), 60.5)
    close(out["train_loss"], 4 * ce + 0.01 * kl, rtol=1e-6, what="K * CE + w * clamped KL")


def test_autoencoder_everything_dropped(outputs, reference):
    out, ref = outputs["autoencoder_all_dropped"], reference["autoencoder_all_dropped"]
    close(out["loss"], ref["loss"], rtol=1e-6, what="loss at dropout 1")
    close(out["other_inputs_loss"], out["loss"], rtol=1e-12, what="the tokens are all masked")
    logits = np.asarray(out["logits"]).reshape(-1, 4, 40)
    close(logits, np.broadcast_to(logits[:1], logits.shape), rtol=1e-12, what="a zero latent for every patch")
    close(out["logits"], ref["logits"], rtol=1e-6, atol=1e-6, what="logits at dropout 1")


def test_autoencoder_training_matches_reference(outputs, reference):
    out, ref = outputs["autoencoder_training"], reference["autoencoder_training"]
    close(out["loss"], ref["loss"], rtol=1e-6, what="training loss (dropout 0.15, seeded)")
    close(out["logits"], ref["logits"], rtol=1e-6, atol=1e-6, what="training logits")
    close(out["eval_loss"], ref["eval_loss"], rtol=1e-6, what="eval loss")
    close(out["eval_logits"], ref["eval_logits"], rtol=1e-6, atol=1e-6, what="eval logits")


# ---- BrierLM ------------------------------------------------------------------------


def test_brier_long_patches(outputs, reference):
    """Brier-n = P(x1 = y) + P(x2 = y) - P(x1 = x2) on the first n tokens of each patch."""
    for patch, offset in ((4, 20), (6, 21)):
        targets, p1, p2 = brier_inputs(offset, 3, 7, patch, 3)
        est = (prefix_match(p1, targets) + prefix_match(p2, targets) - prefix_match(p1, p2)).mean(axis=(0, 1))
        got = outputs["brier_long_patches"][f"K={patch}"]
        close(got, est[:4], rtol=0, atol=1e-6, what=f"Brier-1..4 at K={patch}")
        close(got, reference["brier_long_patches"][f"K={patch}"], rtol=0, atol=1e-6)


def test_brier_short_patches(outputs, reference):
    """K < 4: n-grams run over ceil(4/K) consecutive patches, one window per start patch s
    < L - ceil(4/K); the samples never share a first token, so no collision counts."""
    for patch, offset in ((1, 30), (2, 31), (3, 32)):
        targets, p1, p2 = brier_inputs(offset, 2, 9, patch, 3)
        p2[..., 0] = (p1[..., 0] + 1) % 3
        steps = -(-4 // patch)
        t, a, b = (windows(v, steps, 9)[..., :4] for v in (targets, p1, p2))
        est = (prefix_match(a, t) + prefix_match(b, t)).mean(axis=(0, 1))
        got = outputs["brier_short_patches"][f"K={patch}"]
        close(got, est, rtol=0, atol=1e-6, what=f"Brier-1..4 at K={patch}")
        close(got, reference["brier_short_patches"][f"K={patch}"], rtol=0, atol=1e-6)


# ---- temperature sampling -----------------------------------------------------------


def test_temperature_one_takes_one_sample(outputs):
    for kind, offset in POOL_OFFSETS.items():
        rows = pool_letters(kind, REPEATS, offset)
        assert picks_letters(outputs["temperature_sampling"][f"{kind}@1"]) == [r[0] for r in rows]


def test_temperature_selection_frequencies(outputs):
    """At T = 1/n: the largest m <= n reached by some patch's count, then weights C(count, m).
    Frequencies over 800 independent rows within 5 standard errors."""
    for kind in POOLS:
        for n in (2, 3, 4):
            letters = picks_letters(outputs["temperature_sampling"][f"{kind}@{n}"])
            probs = selection_probabilities(kind, n)
            for c in sorted(set(letters)):
                assert c in probs, f"{kind} at T=1/{n}: picked {c}, which cannot be picked"
            for c, p in probs.items():
                freq = letters.count(c) / REPEATS
                se = np.sqrt(p * (1 - p) / REPEATS)
                assert abs(freq - p) <= 5 * se + 1e-12, f"{kind} at T=1/{n}: P({c}) = {freq:.3f}, expected {p:.3f}"


def test_temperature_sampling_shape(outputs):
    shaped = np.asarray(outputs["temperature_sampling"]["shaped"])
    assert shaped.shape == (2, 3, 2)
    assert (shaped.reshape(-1, 2) == np.asarray(LETTER_TOKENS["A"])).all()
