"""Cases for the iVi scheme: each drives the code under test on fixed inputs or with a
seeded generator and returns what it computed (parameters, samples, paths, prices,
closed-form moments).

These run with the code under test; the checks (another sandbox) compare what they
return with hand-computed values, Inverse Gaussian and Wald identities, closed-form
moments, a Fourier price, and with the reference.
"""

import os

import numpy as np
from heston_ig import (
    call_price,
    expected_integrated_variance,
    expected_variance,
    heston_log_step,
    ig_parameters,
    ivi_step,
    simulate_heston,
    simulate_square_root,
    variance_of_variance,
)

# RCB_SEED varies every random input; rcb validate runs several seeds.
SEED = 1000 * int(os.environ.get("RCB_SEED", "0"))

# a = kappa * theta, b = kappa, c = sigma
A, B, C = 0.09, 1.5, 0.7
H = 1e-6  # half-width of the central differences the checks take of the closed forms


def step(v_next, dU, dZ):
    return {"v_next": v_next, "dU": dU, "dZ": dZ}


def paths(V, U):
    return {"V": V, "U": U}


# ---- one step of the scheme --------------------------------------------------------


def case_ig_parameters():
    alpha, mean, shape = ig_parameters(np.array([0.04, 0.0]), a=0.1, b=2.0, c=0.5, dt=0.1)
    return {"alpha": alpha, "mean": mean, "shape": shape}


# A million draws (the old tests had 200k), so that the checks' moment bounds hold for
# any correct sampler with a margin; only the outputs those checks read are returned.


def case_ivi_constant_variance():
    rng = np.random.default_rng(SEED + 0)
    _, dU, _ = ivi_step(np.full(1_000_000, 0.05), A, B, C, 0.2, rng)
    return {"dU": dU}


def case_ivi_wald():
    rng = np.random.default_rng(SEED + 1)
    _, dU, dZ = ivi_step(np.full(1_000_000, 0.03), A, B, C, 0.25, rng)
    return {"dU": dU, "dZ": dZ}


def case_ivi_random_variance():
    rng = np.random.default_rng(SEED + 2)
    v = rng.uniform(0.0, 0.2, size=1000)
    return step(*ivi_step(v, A, B, C, 0.1, rng))


# ---- the square-root process ---------------------------------------------------------


def case_feller_fails():
    rng = np.random.default_rng(SEED + 3)
    # 2 a = 0.02 < c^2 = 1: the exact process hits zero
    return paths(*simulate_square_root(0.01, 0.01, 1.0, 1.0, 2.0, 40, 2000, rng))


def case_implicit_euler_mean():
    rng = np.random.default_rng(SEED + 4)
    V, U = simulate_square_root(0.02, A, B, C, 1.0, 5, 100_000, rng)
    return {"V": V, "U_T": U[:, -1]}


def case_small_vol_of_vol():
    rng = np.random.default_rng(SEED + 5)
    return paths(*simulate_square_root(0.1, 0.04, 2.0, 1e-7, 1.5, 1000, 2, rng))


def case_closed_form_moments():
    rng = np.random.default_rng(SEED + 6)
    V, U = simulate_square_root(0.02, A, B, C, 1.0, 50, 100_000, rng)
    return {
        "V_T": V[:, -1],
        "U_T": U[:, -1],
        "expected_variance": expected_variance(0.02, A, B, 1.0),
        "expected_integrated_variance": expected_integrated_variance(0.02, A, B, 1.0),
        "variance_of_variance": variance_of_variance(0.02, A, B, C, 1.0),
    }


# ---- closed forms ---------------------------------------------------------------------


def central(f, t):
    """f at t and at t ± H, for a central difference in the checks."""
    return {"at": f(t), "plus": f(t + H), "minus": f(t - H)}


def case_expected_variance():
    return {
        "t1": expected_variance(0.04, 0.1, 2.0, 1.0),
        "t0": expected_variance(0.04, 0.1, 2.0, 0.0),
        "t50": expected_variance(0.04, 0.1, 2.0, 50.0),
        "curve": central(lambda t: expected_variance(0.3, 0.1, 0.7, t), np.linspace(0.1, 3, 30)),
    }


def case_expected_integrated_variance():
    return {
        "t0": expected_integrated_variance(0.04, 0.1, 2.0, 0.0),
        "t1": expected_integrated_variance(0.04, 0.1, 2.0, 1.0),
        "curve": central(
            lambda t: expected_integrated_variance(0.3, 0.1, 0.7, t), np.linspace(0.2, 4, 20)
        ),
    }


def case_variance_of_variance():
    v0, a, b, c = 0.3, 0.1, 0.7, 0.6
    return {
        "curve": variance_of_variance(v0, a, b, c, np.arange(50, 301, 50) * 0.01),
        "t0": variance_of_variance(v0, a, b, c, 0.0),
        "t80": variance_of_variance(v0, a, b, c, 80.0),
    }


# ---- the Heston model -------------------------------------------------------------------


def case_log_price_step():
    return heston_log_step(
        np.array([np.log(100.0), 0.0]),
        r=0.05, rho=-0.6, a=0.1, b=2.0, c=0.5, dt=0.5,
        v=np.array([0.04, 0.04]), v_next=np.array([0.05, 0.09]),
        dU=np.array([0.02, 0.02]), z=np.array([1.5, -1.0]),
    )  # fmt: skip


def case_discounted_price():
    rng = np.random.default_rng(SEED + 7)
    S, V = simulate_heston(100.0, 0.05, 0.8, 0.06, 0.9, -0.8, 0.03, 2.0, 4, 40_000, rng)
    return {"S": S, "V": V}


def case_leverage():
    """One step of 0.001 for rho = -0.7, then 0.5, from one generator."""
    rng = np.random.default_rng(SEED + 8)
    out = []
    for rho in (-0.7, 0.5):
        S, V = simulate_heston(100.0, 0.04, 1.0, 0.04, 0.3, rho, 0.0, 0.001, 1, 50_000, rng)
        out.append({"S": S, "V": V})
    return out


def case_call_price_fourier():
    rng = np.random.default_rng(SEED + 9)
    S, _ = simulate_heston(100.0, 0.04, 1.5, 0.06, 0.7, -0.7, 0.02, 1.0, 25, 20_000, rng)
    s_T = S[:, -1]
    return {"S_T": s_T, "prices": [call_price(s_T, K, 0.02, 1.0) for K in (90.0, 120.0)]}


def case_call_price_hand():
    return call_price(np.array([90.0, 100.0, 110.0, 130.0]), 100.0, 0.05, 2.0)
