"""Cases for top-nσ sampling: each calls the code under test on fixed or seeded logits
and returns what it computed (arrays, token ids).

These run with the code under test; the checks (another sandbox) compare what they
return with hand-worked values, with properties of the method (temperature invariance
of the kept set, the limits n = 0 and large n) and with the reference.
"""

import os

import numpy as np
from top_nsigma import (
    apply_temperature,
    generate,
    logit_statistics,
    masked_softmax,
    min_p_mask,
    sample_from_probs,
    sample_next_token,
    top_k_mask,
    top_nsigma_mask,
    top_nsigma_probs,
    top_p_mask,
)

# RCB_SEED varies every random input; rcb validate runs several seeds.
SEED = 1000 * int(os.environ.get("RCB_SEED", "0"))

NEG = -np.inf
# probabilities at T = 1: [0.1, 0.2, 0.3, 0.4]
PIPE = np.log(np.array([0.1, 0.2, 0.3, 0.4]))


def statistics(logits):
    M, sigma = logit_statistics(logits)
    return {"M": M, "sigma": sigma}


# ---- temperature and statistics ----------------------------------------------------


def case_temperature():
    return {
        "vector": apply_temperature(np.array([2.0, -4.0, 0.5]), 2.0),
        "column": apply_temperature(np.array([[1.0], [3.0]]), 0.5),
    }


def case_statistics_hand():
    return statistics(np.array([1.0, 2.0, 3.0, 6.0]))


def case_statistics_population_std():
    return statistics(np.array([0.0, 2.0]))


def case_statistics_excluded():
    return statistics(np.array([NEG, 1.0, 2.0, NEG, 3.0, 6.0, NEG]))


def case_statistics_batched():
    return statistics(np.array([[1.0, 2.0, 3.0, 6.0], [5.0, 5.0, NEG, 1.0], [-2.0, 0.0, 2.0, 4.0]]))


# ---- the top-nσ mask ------------------------------------------------------------------


def case_mask_hand():
    logits = np.array([1.0, 2.0, 3.0, 6.0])
    return [top_nsigma_mask(logits, n) for n in (1.0, 1.7, 2.7)]


def case_mask_population_std():
    return top_nsigma_mask(np.array([0.0, 0.0, 0.0, 4.0]), 2.0)


def case_mask_threshold():
    return [top_nsigma_mask(np.array([0.0, 2.0]), n) for n in (2.0, 1.999)]


def case_mask_n_zero():
    return top_nsigma_mask(np.array([0.3, 1.5, -2.0, 1.5, 0.0]), 0.0)


def case_mask_excluded():
    logits = np.array([NEG, 1.0, 2.0, 3.0, 6.0, NEG])
    return [top_nsigma_mask(logits, n) for n in (1.7, 50.0)]


# ---- masked softmax and the top-nσ distribution ---------------------------------------


def case_masked_softmax():
    return [
        masked_softmax(np.array([0.0, np.log(3.0), 5.0]), np.array([True, True, False])),
        masked_softmax(
            np.array([[1000.0, 1000.0 + np.log(3.0)], [-3.0, 7.0]]),
            np.array([[True, True], [True, False]]),
        ),
    ]


def case_probs_with_temperature():
    return [top_nsigma_probs(np.array([0.0, 2.0]), n=n, temperature=2.0) for n in (2.0, 1.0)]


def case_probs_three_tokens():
    return top_nsigma_probs(np.array([1.0, 2.0, 3.0, 6.0]), n=1.7, temperature=0.5)


KEPT_SET_TEMPERATURES = (0.25, 0.7, 1.0, 3.0, 10.0)


def case_kept_set_temperatures():
    """For n = 0.5, 1 and 1.5, the distribution at each temperature of KEPT_SET_TEMPERATURES."""
    rng = np.random.default_rng(SEED + 0)
    logits = np.concatenate([rng.normal(size=200), [6.0, 5.2, 4.8]])
    return {
        str(n): [top_nsigma_probs(logits, n, T) for T in KEPT_SET_TEMPERATURES]
        for n in (0.5, 1.0, 1.5)
    }


def case_min_p_against_top_nsigma():
    logits = np.array([4.0, 3.0, 1.0, 0.0, -1.0])
    return {
        "min_p_cold": min_p_mask(logits / 0.5, 0.1),
        "min_p_hot": min_p_mask(logits / 4.0, 0.1),
        "top_nsigma_cold": top_nsigma_mask(logits / 0.5, 1.0),
        "top_nsigma_hot": top_nsigma_mask(logits / 4.0, 1.0),
    }


def case_large_n():
    rng = np.random.default_rng(SEED + 1)
    logits = rng.normal(size=50) * 3
    return top_nsigma_probs(logits, n=np.sqrt(100.0), temperature=1.7)


def case_n_zero_probs():
    logits = np.array([0.5, 2.5, -1.0, 2.0])
    return [top_nsigma_probs(logits, n=0.0, temperature=T) for T in (0.1, 1.0, 5.0)]


def case_probs_shift_and_batch():
    rng = np.random.default_rng(SEED + 2)
    logits = rng.normal(size=(3, 20)) * 2
    return {
        "batch": top_nsigma_probs(logits, 1.0, 0.8),
        "shifted": top_nsigma_probs(logits + 100.0, 1.0, 0.8),
        "rows": [top_nsigma_probs(logits[row], 1.0, 0.8) for row in range(3)],
    }


# ---- truncation baselines ------------------------------------------------------------


def case_top_k():
    return [
        top_k_mask(np.array([3.0, 1.0, 2.0, 5.0]), 2),
        top_k_mask(np.array([3.0, 1.0, 2.0, 5.0]), 3),
        top_k_mask(np.array([1.0, 2.0, 2.0, 0.0]), 1),
        top_k_mask(np.array([[1.0, 0.0, 4.0], [2.0, 3.0, -1.0]]), 1),
    ]


def case_top_p():
    logits = np.log(np.array([0.5, 0.2, 0.3]))
    return [top_p_mask(logits, p) for p in (0.45, 0.55, 0.85)]


def case_top_p_batched():
    logits = np.log(np.array([[0.1, 0.6, 0.3], [0.25, 0.35, 0.4]]))
    return [top_p_mask(logits, p) for p in (0.65, 0.3)]


def case_min_p():
    logits = np.log(np.array([0.5, 0.2, 0.3]))
    return [min_p_mask(logits, p_base) for p_base in (0.5, 0.3, 0.7)]


# ---- sampling ------------------------------------------------------------------------


def case_inverse_cdf():
    p = np.array([0.25, 0.0, 0.5, 0.25])
    return [sample_from_probs(p, u) for u in (0.0, 0.2, 0.25, 0.5, 0.74, 0.75, 0.99)]


def case_inverse_cdf_unnormalised():
    p = np.array([0.1, 0.4, 0.2, 0.3])
    return {
        "unnormalised": sample_from_probs(np.array([1.0, 0.0, 2.0, 1.0]), 0.5),
        "single": sample_from_probs(np.array([0.0, 0.0, 3.0]), 0.0),
        "grid": [sample_from_probs(p, u) for u in (np.arange(1000) + 0.5) / 1000],
    }


def case_generate_greedy():
    table = np.array([[0.0, 3.0, 1.0], [0.0, 0.0, 5.0], [4.0, 1.0, 0.0]])
    return generate(table, 0, 5, np.full(5, 0.9), n=0.0)


def case_generate_hand():
    table = np.array([[0.0, np.log(3.0)], [0.0, 0.0]])
    return {
        "n_large": generate(table, 0, 4, np.array([0.2, 0.3, 0.7, 0.1]), n=10.0),
        "n_one": generate(table, 0, 3, np.array([0.2, 0.3, 0.7]), n=1.0),
    }


# ---- the sampler pipeline -------------------------------------------------------------


def case_pipeline_none():
    return {
        "T1": [sample_next_token(PIPE, u, method="none") for u in (0.05, 0.15, 0.5, 0.65)],
        "T05": [
            sample_next_token(PIPE, u, method="none", temperature=0.5)
            for u in (0.02, 0.1, 0.4, 0.5)
        ],
    }


def case_pipeline_top_k_top_p():
    return {
        "top_k": [sample_next_token(PIPE, u, method="top_k", k=2) for u in (0.0, 0.42, 0.43)],
        "top_p_T05": [
            sample_next_token(PIPE, u, method="top_p", p=0.65, temperature=0.5)
            for u in (0.35, 0.37)
        ],
        "top_p_05_T1": sample_next_token(PIPE, 0.0, method="top_p", p=0.5),
        "top_p_05_T05": sample_next_token(PIPE, 0.0, method="top_p", p=0.5, temperature=0.5),
    }


def case_pipeline_min_p():
    return {
        "T1": sample_next_token(PIPE, 0.0, method="min_p", p_base=0.5),
        "T05": sample_next_token(PIPE, 0.0, method="min_p", p_base=0.5, temperature=0.5),
    }


def case_pipeline_top_nsigma():
    logits = np.array([1.0, 2.0, 3.0, 6.0])
    cut = 1.0 / (1.0 + np.exp(6.0))
    return {
        "below_cut": sample_next_token(logits, cut * 0.99, n=1.7, temperature=0.5),
        "above_cut": sample_next_token(logits, cut * 1.01, n=1.7, temperature=0.5),
        "n_wide": sample_next_token(logits, 0.0, n=2.7),
    }


def case_pipeline_unknown_method():
    """The classes of the exception an unknown method raises (None when none is raised)."""
    try:
        sample_next_token(np.array([1.0, 2.0, 3.0, 6.0]), 0.5, method="bogus")
    except Exception as exc:
        return [cls.__name__ for cls in type(exc).__mro__]
    return None


# ---- everything on random logits, for the comparison with the reference --------------


def case_random_logits():
    """Every function on seeded random logits (no ties), some tokens already excluded
    where a function is meant to handle them."""
    rng = np.random.default_rng(SEED + 3)
    logits = rng.normal(size=(4, 30)) * 2.0
    excluded = logits.copy()
    excluded[rng.random(size=excluded.shape) < 0.2] = NEG
    keep = rng.random(size=logits.shape) < 0.5
    keep[:, 0] = True
    uniforms = rng.random(size=12)
    table = rng.normal(size=(6, 6)) * 1.5
    out = {
        "scaled": apply_temperature(logits, 0.7),
        "statistics": statistics(logits),
        "statistics_excluded": statistics(excluded),
        "masked_softmax": masked_softmax(logits, keep),
        "top_k": [top_k_mask(logits, k) for k in (1, 5, 30)],
        "top_p": [top_p_mask(logits, p) for p in (0.3, 0.9)],
        "min_p": [min_p_mask(logits, p_base) for p_base in (0.05, 0.3)],
        "generate": generate(table, 2, 12, uniforms, n=1.2, temperature=0.8),
    }
    for n in (0.0, 0.8, 1.5, 3.0):
        out[f"mask_{n}"] = top_nsigma_mask(logits, n)
        out[f"mask_excluded_{n}"] = top_nsigma_mask(excluded, n)
        out[f"probs_{n}"] = top_nsigma_probs(logits, n, 0.6)
        out[f"probs_excluded_{n}"] = top_nsigma_probs(excluded, n, 1.3)
    out["samples"] = [
        sample_from_probs(top_nsigma_probs(logits[row], 1.5, 1.0), u)
        for row in range(4)
        for u in uniforms[:3]
    ]
    settings = {
        "top_nsigma": {"n": 1.0},
        "top_k": {"k": 4},
        "top_p": {"p": 0.8},
        "min_p": {"p_base": 0.2},
        "none": {},
    }
    for method, kwargs in settings.items():
        out[f"next_{method}"] = [
            sample_next_token(logits[row], u, method=method, temperature=0.9, **kwargs)
            for row in range(4)
            for u in uniforms[:3]
        ]
    out["next_excluded"] = [
        sample_next_token(excluded[row], u, method=method, temperature=1.1)
        for row in range(4)
        for u in uniforms[:3]
        for method in ("top_nsigma", "none")
    ]
    return out
