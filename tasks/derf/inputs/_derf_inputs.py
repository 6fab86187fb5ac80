"""Seeded inputs for the Derf cases and checks.

Both sandboxes import this file (inputs/ is on the path in both): the checks
regenerate every input from the same seed instead of reading it back from what the
cases returned. RCB_SEED (set alike in both sandboxes; 0 when grading) varies every
random input; rcb validate runs several seeds. Everything is float32, as the models
run.
"""

import os

import numpy as np

SEED = int(os.environ.get("RCB_SEED", "0"))

# GPT-2 (nanoGPT) configuration of the language-model cases: tiny, so one core runs it
# in milliseconds; the alpha initialisations differ per position so that a swap shows.
GPT = dict(block_size=8, vocab_size=32, n_layer=2, n_head=2, n_embd=16, dropout=0.0, bias=True,
           attn_alpha_init_value=0.8, ffn_alpha_init_value=0.6, dec_alpha_init_value=0.3)
GPT_BATCH, GPT_T = 2, 6


def derf_inputs(offset, shape, channels):
    """x of `shape`, Derf parameters (alpha, shift scalars; weight, bias per channel) and
    an upstream gradient g of x's shape, drawn from RCB_SEED + offset."""
    rng = np.random.default_rng(SEED + offset)
    x = (rng.normal(size=shape) * 1.5).astype(np.float32)
    alpha = np.float32(rng.uniform(0.3, 1.5))
    shift = np.float32(rng.uniform(-0.5, 0.5))
    weight = rng.normal(1.0, 0.5, size=channels).astype(np.float32)
    bias = rng.normal(0.0, 0.5, size=channels).astype(np.float32)
    g = rng.normal(size=shape).astype(np.float32)
    return x, alpha, shift, weight, bias, g


def tokens_inputs():
    """Channels-last input (batch, tokens, channels)."""
    return derf_inputs(11, (3, 5, 6), 6)


def image_inputs():
    """Channels-first input (batch, channels, height, width)."""
    return derf_inputs(12, (2, 4, 3, 5), 4)


def model_input(offset, shape):
    rng = np.random.default_rng(SEED + offset)
    return rng.normal(size=shape).astype(np.float32)


def gpt_tokens():
    """Token ids (GPT_BATCH, GPT_T) and next-token targets."""
    rng = np.random.default_rng(SEED + 31)
    idx = rng.integers(0, GPT["vocab_size"], size=(GPT_BATCH, GPT_T))
    targets = rng.integers(0, GPT["vocab_size"], size=(GPT_BATCH, GPT_T))
    return idx, targets
