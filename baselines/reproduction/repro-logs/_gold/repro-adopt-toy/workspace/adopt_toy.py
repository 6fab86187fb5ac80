"""ADOPT against Adam on the toy problem where Adam's choice of beta2 decides convergence.

The stochastic objective on theta in [-1, 1] has gradient k with probability 1/k and
-1 otherwise; the expected gradient 1/k > 0 puts the minimiser at theta = -1. Adam
with a small beta2 drifts to +1; ADOPT converges to -1 for every beta2.
"""

from __future__ import annotations

import json
import math
import os

import numpy as np

K = 10
STEPS = 50_000
# The harness's rerun gives the seed base in RCB_SEED; run i uses seed base + i.
SEED_BASE = int(os.environ.get("RCB_SEED", "0"))
SEEDS = range(SEED_BASE, SEED_BASE + 5)
BETA1 = 0.9
BETA2S = (0.1, 0.5, 0.999)
LR = 0.1
EPS = 1e-8
TAIL = 5_000
CHECKPOINTS = [1, 10, 100, 1000, 2000, 5000, 10000, 20000, 30000, 40000, 50000]


def gradients(seed: int) -> list[float]:
    """g_t = K with probability 1/K, else -1 (the same draws for every optimiser)."""
    rng = np.random.default_rng(seed)
    big = rng.random(STEPS) < 1.0 / K
    return [float(K) if b else -1.0 for b in big]


def adam(grads: list[float], beta2: float) -> list[float]:
    """Adam with bias correction; theta after each step, projected onto [-1, 1]."""
    theta = m = v = 0.0
    path = []
    for t, g in enumerate(grads, start=1):
        m = BETA1 * m + (1 - BETA1) * g
        v = beta2 * v + (1 - beta2) * g * g
        m_hat = m / (1 - BETA1**t)
        v_hat = v / (1 - beta2**t)
        theta -= LR / math.sqrt(t) * m_hat / (math.sqrt(v_hat) + EPS)
        theta = min(1.0, max(-1.0, theta))
        path.append(theta)
    return path


def adopt(grads: list[float], beta2: float) -> list[float]:
    """ADOPT (Algorithm 1, no clipping): v_0 = g_0^2 and no update at the first step;
    then normalise by the previous v, momentum after normalisation, v updated last."""
    theta = m = 0.0
    v = grads[0] * grads[0]
    path = [theta]
    for t, g in enumerate(grads[1:], start=2):
        m = BETA1 * m + (1 - BETA1) * g / max(math.sqrt(v), EPS)
        theta -= LR / math.sqrt(t) * m
        theta = min(1.0, max(-1.0, theta))
        v = beta2 * v + (1 - beta2) * g * g
        path.append(theta)
    return path


def main() -> None:
    metrics: dict[str, list[float]] = {}
    curves: dict[str, dict[str, list[float]]] = {}
    for name, optimiser in (("adam", adam), ("adopt", adopt)):
        for beta2 in BETA2S:
            paths = [optimiser(gradients(seed), beta2) for seed in SEEDS]
            metrics[f"final_theta_{name}_b2_{beta2}"] = [sum(p[-TAIL:]) / TAIL for p in paths]
            if beta2 == 0.1:
                curves[f"theta_{name}_b2_0.1"] = {
                    "x": CHECKPOINTS,
                    "y": [sum(p[c - 1] for p in paths) / len(paths) for c in CHECKPOINTS],
                }
    with open("results.json", "w", encoding="utf-8") as handle:
        json.dump({"metrics": metrics, "curves": curves}, handle, indent=1)


if __name__ == "__main__":
    main()
