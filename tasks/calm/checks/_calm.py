"""Shared by the checks: the cases' inputs regenerated from RCB_SEED, and the pieces of
CALM written out in numpy from the paper (no CALM code)."""

import math
import os

import numpy as np

SEED = int(os.environ.get("RCB_SEED", "0"))
VOCAB = 40


def rng(offset):
    return np.random.default_rng(1000 * SEED + offset)


def close(actual, desired, rtol=1e-10, atol=1e-12, what="value"):
    actual = np.asarray(actual, dtype=float)
    desired = np.asarray(desired, dtype=float)
    assert actual.shape == desired.shape, f"{what}: shape {actual.shape} != {desired.shape}"
    np.testing.assert_allclose(actual, desired, rtol=rtol, atol=atol, err_msg=what)


# ---- the generative head ------------------------------------------------------------


def silu(z):
    return z / (1.0 + np.exp(-z))


def layer_norm(x, w, b, eps=1e-6):
    mu = x.mean(-1, keepdims=True)
    var = ((x - mu) ** 2).mean(-1, keepdims=True)
    return (x - mu) / np.sqrt(var + eps) * w + b


def linear(x, W, b):
    return x @ np.asarray(W).T + b


def gated_block(w, prefix, x, y):
    """The head's residual block: the noise stream x, normalised, concatenated with the
    condition y, through Linear-SiLU-Linear-SiLU-Linear to a gate and an up projection;
    x plus the down projection of SiLU(gate) * up."""
    g = lambda k: np.asarray(w[prefix + k])  # noqa: E731
    z = np.concatenate([layer_norm(x, g("in_ln.weight"), g("in_ln.bias")), y], axis=-1)
    z = silu(linear(z, g("linears.0.weight"), g("linears.0.bias")))
    z = silu(linear(z, g("linears.2.weight"), g("linears.2.bias")))
    z = linear(z, g("linears.4.weight"), g("linears.4.bias"))
    gate, up = np.split(z, 2, axis=-1)
    return x + linear(silu(gate) * up, g("down_proj.weight"), g("down_proj.bias"))


def generator(w, hidden, noise, n_blocks):
    g = lambda k: np.asarray(w[k])  # noqa: E731
    z = layer_norm(linear(noise, g("noise_embd.weight"), g("noise_embd.bias")), g("norm_noise.weight"), g("norm_noise.bias"))
    h = layer_norm(linear(hidden, g("hidden_embd.weight"), g("hidden_embd.bias")), g("norm_hidden.weight"), g("norm_hidden.bias"))
    for i in range(n_blocks):
        z = gated_block(w, f"mlp_blocks.{i}.", z, h)
    z = layer_norm(z, g("final_layer.in_ln.weight"), g("final_layer.in_ln.bias"))
    z = silu(linear(z, g("final_layer.linears.0.weight"), g("final_layer.linears.0.bias")))
    return linear(z, g("final_layer.linears.2.weight"), g("final_layer.linears.2.bias"))


# ---- the energy score ---------------------------------------------------------------


def pair_term(x, beta):
    """Mean of ||x_i - x_j||^beta over the ordered pairs i != j (x: (n, ...batch, d))."""
    n = x.shape[0]
    d = np.linalg.norm(x[:, None] - x[None, :], axis=-1) ** beta
    return d.sum(axis=(0, 1)) / (n * (n - 1))


def target_term(x, y, beta):
    """Mean of ||x_i - y||^beta over the samples x_i (y: (...batch, d))."""
    return (np.linalg.norm(x - y[None], axis=-1) ** beta).mean(axis=0)


EXACT_SCORES = [(1.0, (8, 6, 5), (6, 5)), (1.5, (4, 3, 2, 7), (3, 2, 7)), (0.5, (2, 5, 3), (5, 3))]


def exact_score_inputs():
    r = rng(3)
    out = []
    for beta, xs, ms in EXACT_SCORES:
        x = r.normal(size=xs)
        mean = r.normal(size=ms)
        out.append((beta, x, mean))
    return out


def sampled_score_inputs():
    r = rng(4)
    x = r.normal(size=(8, 40, 4))
    mean = r.normal(size=(40, 4)) * 0.5
    log_std = np.log(0.3) + 0.2 * r.normal(size=(40, 4))
    return x, mean, log_std


# ---- the autoencoder ----------------------------------------------------------------

AE_MEANS = np.linspace(-2.0, 2.0, 6)


def clamped_kl(mean, log_std, clamp):
    """The per-dimension KL to N(0, 1), each clamped from below, summed over dimensions."""
    kl = 0.5 * (mean**2 + np.exp(2 * log_std) - 1 - 2 * log_std)
    return np.maximum(kl, clamp).sum(-1)


def cross_entropy(logits, labels):
    logits = np.asarray(logits, dtype=float)
    m = logits.max(-1, keepdims=True)
    logz = (m + np.log(np.exp(logits - m).sum(-1, keepdims=True)))[..., 0]
    return float(np.mean(logz - logits[np.arange(len(labels)), labels]))


def token_batch(offset, batch, n_patches, patch_size):
    return rng(offset).integers(1, VOCAB, size=(batch, n_patches * patch_size))


# ---- BrierLM ------------------------------------------------------------------------


def brier_inputs(offset, batch, length, patch, vocab):
    r = rng(offset)
    targets = r.integers(0, vocab, size=(batch, length, patch))
    p1 = np.where(r.random(targets.shape) < 0.7, targets, r.integers(0, vocab, size=targets.shape))
    p2 = np.where(r.random(targets.shape) < 0.6, p1, r.integers(0, vocab, size=targets.shape))
    return targets, p1, p2


def prefix_match(a, b):
    """1 where the first k tokens of a and b all agree, for k = 1, 2, ... (last axis)."""
    return np.cumprod(a == b, axis=-1)


def windows(tokens, n_steps, length):
    """The tokens of patches s, s+1, ..., s+n_steps-1 in a row, for s < length - n_steps."""
    return np.stack(
        [np.concatenate([tokens[:, s + j] for j in range(n_steps)], axis=-1) for s in range(length - n_steps)],
        axis=1,
    )


# ---- temperature sampling -----------------------------------------------------------

POOLS = {"skewed": "AAABBC", "distinct": "ABCDEF", "even": "AABBCC", "single": "AAAAAB"}
LETTER_TOKENS = {c: (i + 1, (3 * i + 2) % VOCAB) for i, c in enumerate("ABCDEF")}
POOL_OFFSETS = {"skewed": 40, "distinct": 41, "even": 42, "single": 43}
REPEATS = 800


def pool_letters(kind, repeats, offset):
    r = rng(offset)
    rows = []
    for _ in range(repeats):
        letters = list(POOLS[kind])
        r.shuffle(letters)
        rows.append(letters)
    return rows


def selection_probabilities(kind, n):
    """The approximate sampler at temperature 1/n on a pool: the largest m <= n that some
    patch reaches m times, then each such patch with weight C(count, m)."""
    counts = {c: POOLS[kind].count(c) for c in sorted(set(POOLS[kind]))}
    for m in range(n, 0, -1):
        weights = {c: math.comb(k, m) for c, k in counts.items() if k >= m}
        if weights:
            total = sum(weights.values())
            return {c: w / total for c, w in weights.items()}
    raise AssertionError("unreachable")


def picks_letters(picks):
    """The sampler's picks (one patch of two tokens per row) as pool letters."""
    by_tokens = {v: c for c, v in LETTER_TOKENS.items()}
    picks = np.asarray(picks)
    assert picks.shape == (REPEATS, 2), f"one patch of 2 tokens per row, got {picks.shape}"
    letters = [by_tokens.get((int(a), int(b))) for a, b in picks]
    assert None not in letters, "a pick that is not in the pool"
    return letters
