"""Seeded inputs shared by the RAE cases and checks (never shown to the model)."""

import os
from pathlib import Path

import numpy as np

CONFIGS = Path(__file__).resolve().parent / "configs"
IMAGE_MEAN = [0.485, 0.456, 0.406]
IMAGE_STD = [0.229, 0.224, 0.225]
PATCH, HIDDEN, INPUT_SIZE = 4, 16, 16        # stand-in encoder: 4x4 grid of 16-dim tokens
EPS = 1e-5
NOISE_TAU = 0.8
NOISE_SHAPE = (400, 16, 16)                  # batch of token grids for the noising statistics

# the paper's dimension-dependent shift: alpha = sqrt(m / n), base n = 4096
SHIFT_DIM, SHIFT_BASE = 768 * 16 * 16, 4096
ALPHA = float(np.sqrt(SHIFT_DIM / SHIFT_BASE))
N_T = 6000                                   # timesteps drawn per sample() call
TRAIN_EPS, SAMPLE_EPS = 0.05, 0.2            # a noise-predicting transport: t0 = eps, t1 = 1 - eps
GRID_STEPS = 9

# tiny DiT^DH: 4x4 latent grid (16 tokens) of 8 channels, encoder width 24, head width 32
DDT_KW = dict(input_size=4, patch_size=1, in_channels=8, hidden_size=[24, 32], depth=[2, 1],
              num_heads=[2, 2], mlp_ratio=2.0, class_dropout_prob=0.1, num_classes=10)


def seed():
    return int(os.environ.get("RCB_SEED", "0"))


def images():
    rng = np.random.default_rng(seed() + 11)
    return {
        "resized": rng.uniform(0.0, 1.0, size=(2, 3, 20, 20)).astype(np.float32),
        "native": rng.uniform(0.0, 1.0, size=(2, 3, 16, 16)).astype(np.float32),
        "wide": rng.uniform(0.0, 1.0, size=(2, 3, 16, 20)).astype(np.float32),
    }


def latent_stats():
    rng = np.random.default_rng(seed() + 13)
    mean = rng.normal(0.0, 0.5, size=(1, HIDDEN, 4, 4)).astype(np.float32)
    var = rng.uniform(0.2, 3.0, size=(1, HIDDEN, 4, 4)).astype(np.float32)
    return mean, var


def latents():
    rng = np.random.default_rng(seed() + 17)
    return rng.normal(0.0, 1.0, size=(2, HIDDEN, 4, 4)).astype(np.float32)


def ddt_inputs():
    rng = np.random.default_rng(seed() + 19)
    return {
        "x": rng.normal(size=(2, 8, 4, 4)).astype(np.float32),
        "t": rng.uniform(0.0, 1.0, size=(2,)).astype(np.float32),
        "y": rng.integers(0, 10, size=(2,)),
        "s": rng.normal(size=(2, 16, 24)).astype(np.float32),
        "t2": rng.uniform(0.0, 1.0, size=(2,)).astype(np.float32),
        "y2": rng.integers(0, 10, size=(2,)),
    }


def shifted_grid(t0, t1, n, alpha):
    """The paper's shifted timesteps on the sampler's grid: u = 1 - linspace(t0, t1, n),
    t = alpha u / (1 + (alpha - 1) u)."""
    u = 1.0 - np.linspace(t0, t1, n)
    return alpha * u / (1.0 + (alpha - 1.0) * u)
