"""Table 5 of FastLSQ at its own scale, with the authors' package at the paper's release.

Regression mode: frozen random features fit a known exact solution (A = H, b = u) in
one least-squares solve, and the value and gradient errors are measured on test points.
The problems, the feature blocks and the solvers are the authors' own, from the
package's first release (fastlsq 0.1.0, February 2026), which is the paper's code. As
in the paper's runs, everything is float32 and the solve is PyTorch's QR least squares
(driver "gels", the one the paper's GPU used).
"""

from __future__ import annotations

import json
import os

import numpy as np
import torch
from fastlsq import FastLSQSolver, PIELMSolver
from fastlsq.problems.regression import KleinGordon_Regression, SineGordon_Regression

FEATURES, BLOCKS, TEST = 500, 3, 2_000
TEST_SEED = 999  # the paper's evaluation draws its test points after this seed
# The bandwidth the authors' grid search picks for each problem and basis (run by rcb).
SIGMA = {
    ("sinegordon", "sin"): 3.0,
    ("sinegordon", "tanh"): 1.0,
    ("kleingordon", "sin"): 8.0,
    ("kleingordon", "tanh"): 8.0,
}
PROBLEMS = {"sinegordon": SineGordon_Regression, "kleingordon": KleinGordon_Regression}
SOLVERS = {"sin": FastLSQSolver, "tanh": PIELMSolver}
# The harness's rerun gives the seed base in RCB_SEED; run i uses seed base + i.
SEED_BASE = int(os.environ.get("RCB_SEED", "0"))
SEEDS = range(SEED_BASE, SEED_BASE + 5)
# Section 3.7's bandwidth sweep on Klein-Gordon: FastLSQ's value error against sigma.
SWEEP = [0.5, 1.0, 2.0, 3.0, 5.0]


def fit(problem: str, basis: str, seed: int, sigma: float | None = None) -> tuple[float, float]:
    """One regression fit (at the problem's bandwidth unless ``sigma`` is given); returns
    the relative L2 errors of the value and the gradient on the test points."""
    torch.manual_seed(seed)
    np.random.seed(seed)
    task = PROBLEMS[problem]()
    solver = SOLVERS[basis](task.dim)
    x, data = task.get_train_data()
    for _ in range(BLOCKS):
        solver.add_block(hidden_size=FEATURES, scale=sigma or SIGMA[problem, basis])
    a, b = task.build(solver, x, data)
    solver.beta = torch.linalg.lstsq(a, b, driver="gels").solution
    torch.manual_seed(TEST_SEED)
    xt = task.get_test_points(TEST)
    u, grad = solver.predict_with_grad(xt)
    u_true, grad_true = task.exact(xt), task.exact_grad(xt)
    value = torch.linalg.norm(u - u_true) / torch.linalg.norm(u_true)
    gradient = torch.linalg.norm(grad - grad_true) / torch.linalg.norm(grad_true)
    return float(value), float(gradient)


def main() -> None:
    torch.set_default_dtype(torch.float32)
    metrics: dict[str, list[float]] = {}
    for problem in PROBLEMS:
        for basis in SOLVERS:
            errors = [fit(problem, basis, seed) for seed in SEEDS]
            metrics[f"log10_value_{basis}_{problem}"] = [float(np.log10(v)) for v, _ in errors]
            metrics[f"log10_grad_{basis}_{problem}"] = [float(np.log10(g)) for _, g in errors]
            shown = " ".join(f"{v:.2e}/{g:.2e}" for v, g in errors)
            print(problem, basis, "value/gradient:", shown, flush=True)
        # How many times worse the tanh baseline fits, seed by seed, in decades.
        sin, tanh = metrics[f"log10_value_sin_{problem}"], metrics[f"log10_value_tanh_{problem}"]
        metrics[f"log10_gap_{problem}"] = [t - s for s, t in zip(sin, tanh, strict=True)]
    sweep = [
        float(np.mean([np.log10(fit("kleingordon", "sin", seed, sigma)[0]) for seed in SEEDS]))
        for sigma in SWEEP
    ]
    print("kleingordon sin sweep:", " ".join(f"{y:.2f}" for y in sweep), flush=True)
    curves = {"sigma_sweep_sin_kleingordon": {"x": SWEEP, "y": sweep}}
    with open("results.json", "w", encoding="utf-8") as handle:
        json.dump({"metrics": metrics, "curves": curves}, handle, indent=1)


if __name__ == "__main__":
    main()
