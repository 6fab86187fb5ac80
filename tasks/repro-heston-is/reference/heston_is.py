"""Table 1 of Tu and Han (arXiv:2511.19826v1): brute-force Monte Carlo against the
paper's importance sampling for a Heston call in the short-maturity regime.

The importance sampling tilts only the Brownian motion W2 that drives the price and not
the variance: under the simulation measure dW2 = dW2bar + h_t dt with
h_t = -(hbar / rhobar) sqrt(V_t), so the log-price gains the drift -hbar V_t dt, and
hbar = log(S0 / K) / (theta T) moves the mean log-price at maturity to about log K. Each
simulated payoff is weighted by the likelihood ratio
exp(-int h dW2bar - 1/2 int h^2 dt). The variance follows the same Milstein scheme under
both measures; the variance reduction ratio is (SE_BMC / SE_IS)^2. Between Table 1's
one day and one month, a sweep over the maturity shows the gain fading as T grows.
"""

from __future__ import annotations

import json
import os

import numpy as np

S0, K, R = 2000.0, 2200.0, 0.0
V0, THETA, KAPPA, SIGMA, RHO = 0.36, 0.36, 60.0, 3.0, -0.1
RHOBAR = float(np.sqrt(1.0 - RHO**2))
# Table 1's maturities, in trading days, and the sweep between them.
TABLE_DAYS = {"1d": 1, "1m": 21}
SWEEP_DAYS = [1, 2, 5, 10, 21]
PATHS = 2**18
STEPS = 50
# The harness's rerun gives the seed base in RCB_SEED; run i uses seed base + i.
SEED_BASE = int(os.environ.get("RCB_SEED", "0"))
SEEDS = range(SEED_BASE, SEED_BASE + 5)


def call_estimate(maturity: float, hbar: float, rng: np.random.Generator) -> tuple[float, float]:
    """Monte Carlo call price and its standard error, under the measure tilted by hbar.

    hbar = 0 is brute-force Monte Carlo (every likelihood ratio is 1).
    """
    dt = maturity / STEPS
    sqrt_dt = np.sqrt(dt)
    v = np.full(PATHS, V0)
    x = np.full(PATHS, np.log(S0))
    log_ratio = np.zeros(PATHS)
    for _ in range(STEPS):
        z1 = rng.standard_normal(PATHS)
        z2 = rng.standard_normal(PATHS)
        v_pos = np.maximum(v, 0.0)
        vol = np.sqrt(v_pos)
        h = -hbar / RHOBAR * vol
        x = x + (R - 0.5 * v_pos - hbar * v_pos) * dt + vol * sqrt_dt * (RHO * z1 + RHOBAR * z2)
        log_ratio -= h * sqrt_dt * z2 + 0.5 * h * h * dt
        # Milstein for the variance; W1 carries no tilt, so V has the same law under both.
        v = v + KAPPA * (THETA - v_pos) * dt + SIGMA * vol * sqrt_dt * z1
        v += 0.25 * SIGMA**2 * dt * (z1**2 - 1.0)
    payoff = np.exp(-R * maturity) * np.maximum(np.exp(x) - K, 0.0) * np.exp(log_ratio)
    return float(payoff.mean()), float(payoff.std(ddof=1) / np.sqrt(PATHS))


def main() -> None:
    log10_vrr: dict[int, list[float]] = {}
    metrics: dict[str, list[float]] = {}
    labels = {days: label for label, days in TABLE_DAYS.items()}
    for days in SWEEP_DAYS:
        maturity = days / 252.0
        hbar = np.log(S0 / K) / (THETA * maturity)
        for seed in SEEDS:
            bmc, bmc_se = call_estimate(maturity, 0.0, np.random.default_rng([seed, 0]))
            imp, imp_se = call_estimate(maturity, hbar, np.random.default_rng([seed, 1]))
            log10_vrr.setdefault(days, []).append(2.0 * float(np.log10(bmc_se / imp_se)))
            if days in labels:
                metrics.setdefault(f"bmc_price_{labels[days]}", []).append(bmc)
                metrics.setdefault(f"is_price_{labels[days]}", []).append(imp)
            print(
                f"T={days}/252 seed={seed}: BMC {bmc:.6f} (SE {bmc_se:.6f})  "
                f"IS {imp:.6f} (SE {imp_se:.6f})  VRR {(bmc_se / imp_se) ** 2:.1f}",
                flush=True,
            )
    for label, days in TABLE_DAYS.items():
        metrics[f"log10_vrr_{label}"] = log10_vrr[days]
    curves = {
        "vrr_vs_maturity": {
            "x": SWEEP_DAYS,
            "y": [float(np.mean(log10_vrr[days])) for days in SWEEP_DAYS],
        }
    }
    with open("results.json", "w", encoding="utf-8") as handle:
        json.dump({"metrics": metrics, "curves": curves}, handle, indent=1)


if __name__ == "__main__":
    main()
