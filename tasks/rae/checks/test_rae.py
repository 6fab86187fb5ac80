"""Checks for RAE (arXiv 2510.11690). Reference comparisons use checks/_rae.py's
tolerances (float32 reorderings); closed forms come from the paper: latents normalised
with precomputed latent statistics, decoder-training noise n ~ N(0, sigma^2 I) with one
sigma ~ U(0, tau) per sample (the paper's |N(0, tau^2)| is drawn as U(0, tau) in the
authors' code), and the shifted timestep t_m = alpha t_n / (1 + (alpha - 1) t_n),
alpha = sqrt(m / n). Statistical bounds hold with wide margins for RCB_SEED 0..9."""

import numpy as np
import pytest

import _rae_inputs as I
from _rae import arr, close


# ---------------------------------------------------------------- RAE encode / decode

@pytest.mark.parametrize("key", ["native", "resized", "wide"])
def test_encode_matches_reference(outputs, reference, key):
    for kind in ("plain", "normalized", "tokens"):
        close(outputs["encode"][key][kind], reference["encode"][key][kind])


def test_encode_layout_and_normalization(outputs):
    out = outputs["encode"]
    mean, var = I.latent_stats()
    for key in ("native", "resized", "wide"):
        plain, tokens, normed = (arr(out[key][k]) for k in ("plain", "tokens", "normalized"))
        assert plain.shape == (2, I.HIDDEN, 4, 4) and tokens.shape == (2, 16, I.HIDDEN)
        # the 2-D latent is the token sequence laid out channels-first on the sqrt(N) grid
        np.testing.assert_allclose(plain, tokens.transpose(0, 2, 1).reshape(2, I.HIDDEN, 4, 4), atol=1e-6)
        np.testing.assert_allclose(normed, (plain - mean) / np.sqrt(var + I.EPS), rtol=1e-5, atol=1e-5)
    # at the encoder's input size no resizing: features of the image standardised with the
    # encoder's pixel mean and std
    np.testing.assert_allclose(arr(out["native"]["tokens"]), arr(out["encoder_on_standardized"]), atol=1e-5)


def test_decode_matches_reference(outputs, reference):
    for kind in ("plain", "normalized", "tokens", "roundtrip_plain"):
        close(outputs["decode"][kind], reference["decode"][kind])


def test_decode_properties(outputs):
    out = outputs["decode"]
    plain = arr(out["plain"])
    assert plain.shape == (2, 3, 16, 16)
    # decoding normalised latents first undoes the normalisation
    np.testing.assert_allclose(arr(out["normalized"]), plain, rtol=1e-4, atol=1e-4)
    # 2-D latents and the same latents as tokens decode alike
    np.testing.assert_allclose(arr(out["tokens"]), plain, atol=1e-5)


# ---------------------------------------------------------------- noise augmentation

def test_noising_statistics(outputs):
    noise = arr(outputs["noising"]["direct"])
    assert noise.shape == I.NOISE_SHAPE
    flat = noise.reshape(noise.shape[0], -1)
    # one sigma per sample: sigma ~ U(0, tau); within a sample the noise is N(0, sigma^2)
    s = flat.std(axis=1) / I.NOISE_TAU
    assert s.max() < 1.12 and s.min() >= 0.0
    assert abs(s.mean() - 0.5) < 0.05, s.mean()
    assert abs(s.std() - np.sqrt(1 / 12)) < 0.04, s.std()
    # zero-mean: the per-sample means, in units of their standard error, are ~ N(0, 1)
    zm = flat.mean(axis=1) / (flat.std(axis=1) / np.sqrt(flat.shape[1]))
    assert abs(zm.mean()) < 0.25 and abs(zm.std() - 1.0) < 0.2
    # standardised within each sample, the noise is Gaussian (kurtosis 3)
    zs = flat / flat.std(axis=1, keepdims=True)
    assert abs((zs ** 4).mean() - 3.0) < 0.15


def test_noising_in_encode(outputs):
    out = outputs["noising"]
    diff = arr(out["train_minus_eval"])
    assert diff.shape == (128, 16, I.HIDDEN)
    s = diff.reshape(128, -1).std(axis=1) / I.NOISE_TAU
    assert s.max() < 1.2 and abs(s.mean() - 0.5) < 0.09 and s.std() > 0.18
    # no noise at evaluation, nor with tau = 0 (the stand-in encoder's attention takes another
    # kernel in training mode: a few float32 ulps apart)
    np.testing.assert_allclose(arr(out["eval_twice"]), 0.0, atol=1e-6)
    np.testing.assert_allclose(arr(out["tau_zero_train"]), 0.0, atol=2e-5)


# ---------------------------------------------------------------- shifted timesteps

def _unshift(t, alpha):
    return t / (alpha - (alpha - 1.0) * t)


def _ks_uniform(u, lo, hi):
    u = np.sort((u - lo) / (hi - lo))
    n = len(u)
    return max(np.max(np.arange(1, n + 1) / n - u), np.max(u - np.arange(n) / n))


@pytest.mark.parametrize("name,alpha", [("uniform_shifted", I.ALPHA), ("uniform_plain", 1.0)])
def test_training_timesteps_uniform(outputs, name, alpha):
    out = outputs["training_timesteps"][name]
    t = arr(out["t"])
    assert t.shape == (I.N_T,) and out["t_dtype"] == "torch.float64"
    assert out["x1_unchanged"] and out["x0_shape"] == [I.N_T, 2]
    # undo the shift: the base time is uniform on [0, 1 - 1/1000]
    tn = _unshift(t, alpha)
    assert tn.min() >= -1e-9 and tn.max() <= 0.999 + 1e-9
    assert _ks_uniform(tn, 0.0, 0.999) < 0.03
    x0 = arr(out["x0"])
    assert abs(x0.mean()) < 0.05 and abs(x0.std() - 1.0) < 0.04


def test_training_timesteps_shift_moves_mass_to_noise(outputs):
    t = arr(outputs["training_timesteps"]["uniform_shifted"]["t"])
    # closed form of the shifted uniform: P(t_m <= 1/2) = (1/2) / (alpha - (alpha - 1)/2) / 0.999
    p = 0.5 / (I.ALPHA - (I.ALPHA - 1.0) * 0.5) / 0.999
    assert abs(np.mean(t <= 0.5) - p) < 0.025
    assert abs(np.median(t) - I.ALPHA * 0.4995 / (1 + (I.ALPHA - 1) * 0.4995)) < 0.02


def test_training_timesteps_train_interval(outputs):
    # a noise-predicting transport trains on [train_eps, 1 - train_eps] (sample_eps is for sampling)
    tn = _unshift(arr(outputs["training_timesteps"]["noise_model_eps"]["t"]), I.ALPHA)
    lo, hi = I.TRAIN_EPS, 1.0 - I.TRAIN_EPS
    assert tn.min() >= lo - 1e-9 and tn.max() <= hi + 1e-9
    assert _ks_uniform(tn, lo, hi) < 0.03


def test_training_timesteps_logitnormal(outputs):
    out = outputs["training_timesteps"]["logitnormal_shifted"]
    t = arr(out["t"])
    assert t.shape == (I.N_T,) and out["x1_unchanged"]
    tn = _unshift(t, I.ALPHA)
    assert tn.min() > 0.0 and tn.max() <= 0.999 + 1e-9
    z = np.log(tn / (1 - tn))
    assert abs(z.mean()) < 0.06 and abs(z.std() - 1.0) < 0.05


def test_training_timesteps_match_reference_in_law(outputs, reference):
    # random draws may come in another order: compare quantiles, not samples
    q = np.linspace(0.05, 0.95, 19)
    for name in ("uniform_shifted", "uniform_plain", "logitnormal_shifted", "noise_model_eps"):
        a = np.quantile(arr(outputs["training_timesteps"][name]["t"]), q)
        b = np.quantile(arr(reference["training_timesteps"][name]["t"]), q)
        np.testing.assert_allclose(a, b, atol=0.035)


# ---------------------------------------------------------------- sampler time grids

@pytest.mark.parametrize("key,alpha", [("plain", 1.0), ("shifted", I.ALPHA)])
def test_ode_time_grid(outputs, key, alpha):
    out = outputs["time_grids"][key]
    grid = I.shifted_grid(0.0, 0.999, I.GRID_STEPS, alpha)
    np.testing.assert_allclose(arr(out["ode_t"]), grid, rtol=1e-6, atol=1e-6)
    np.testing.assert_allclose(arr(out["ode_last"]), (grid[-1] - grid[0]) * np.ones((3, 2)), atol=1e-5)


def test_ode_time_grid_other_interval(outputs):
    out = outputs["time_grids"]["other_interval"]
    grid = I.shifted_grid(0.1, 0.9, 5, 2.0)
    np.testing.assert_allclose(arr(out["t"]), grid, rtol=1e-6, atol=1e-6)
    np.testing.assert_allclose(arr(out["last"]), (grid[-1] - grid[0]) * np.ones(2), atol=1e-5)


def test_sampler_ode_on_shifted_grid(outputs):
    grid = I.shifted_grid(0.0, 0.999, I.GRID_STEPS, I.ALPHA)
    expected = np.sum(np.diff(grid) * grid[:-1])  # Euler for dx/dt = t
    np.testing.assert_allclose(arr(outputs["time_grids"]["sampler_ode_last"]), expected * np.ones((2, 3)), atol=1e-5)


# ---------------------------------------------------------------- DiT^DH

def test_ddt_forward_matches_reference(outputs, reference):
    for key in ("out", "out_given_s", "out_layernorm_gelu"):
        close(outputs["ddt_forward"][key], reference["ddt_forward"][key], rtol=2e-4, atol=2e-5)


def test_ddt_forward_properties(outputs):
    out = outputs["ddt_forward"]
    assert arr(out["out"]).shape == (2, 8, 4, 4)
    # given the encoder's tokens s, the wide head is conditioned on s alone
    np.testing.assert_allclose(arr(out["out_given_s"]), arr(out["out_given_s_other_ty"]), atol=1e-6)
    assert not np.allclose(arr(out["out_given_s"]), arr(out["out"]), atol=1e-3)
    # at initialisation the final layer is zero, so is the velocity
    assert np.all(arr(out["out_at_init"]) == 0)
