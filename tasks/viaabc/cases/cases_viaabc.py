"""Cases for viaABC: each drives the authors' code on the toy problem of
inputs/_viaabc_inputs.py (a closed-form two-rate decay "simulator" and a fixed
analytic tanh token encoder standing in for the trained ViT/MAE) and returns what it
computed: the latent distances (token-wise cosine, BERTScore), the weighted quantile,
the particle importance weights, proposals from the perturbation kernel, the
initial population, one PMC generation, the adaptive-tolerance update and a short
full run. Random draws come from numpy's global generator seeded from RCB_SEED.
"""

import logging

import numpy as np
import torch
from scipy.stats import uniform

from viaABC import viaABC
from metrics import bert_score, pairwise_cosine
from utils import DensityRatioEstimation, weighted_sample_quantile

import _viaabc_inputs as inp

torch.set_num_threads(1)
SEED = inp.SEED


class ToyEncoder(torch.nn.Module):
    """Fixed analytic stand-in for the encoder: one tanh token per time point."""

    def __init__(self):
        super().__init__()
        self.register_buffer("W", torch.tensor(inp.ENC_W, dtype=torch.float32))
        self.register_buffer("c", torch.tensor(inp.ENC_C, dtype=torch.float32))

    @property
    def device(self):
        return torch.device("cpu")

    def get_latent(self, x, pooling_method):
        if x.ndim == 2:
            x = x.unsqueeze(0)
        return torch.tanh(x @ self.W + self.c)


class ToyABC(viaABC):
    def __init__(self, metric="pairwise_cosine"):
        super().__init__(
            num_parameters=2, mu=inp.LOWER, sigma=inp.UPPER,
            observational_data=inp.trajectory(inp.THETA_TRUE), model=ToyEncoder(),
            state0=None, t0=0, tmax=3, time_space=inp.TIMES,
            pooling_method="no_cls", metric=metric,
        )
        self.logger.setLevel(logging.WARNING)

    def sample_priors(self):
        return np.random.uniform(self.mu, self.sigma, self.num_parameters)

    def calculate_prior_log_prob(self, theta):
        return np.sum(uniform.logpdf(theta, loc=self.mu, scale=self.sigma - self.mu))

    def simulate(self, parameters, time_space=None):
        return inp.trajectory(parameters), 0

    def preprocess(self, x):
        return x


class SmallToyABC(ToyABC):
    """The same toy, with a 20-basis density-ratio estimator so that a run stays fast."""

    def _initialize_first_generation(self, k):
        super()._initialize_first_generation(k)
        self.densratio = DensityRatioEstimation(n=20, epsilon=0.001, max_iter=200, abs_tol=0.01, fold=5, optimize=False)


def case_token_cosine():
    a = inp.token_arrays()
    return {
        "random": float(pairwise_cosine(a["x3"], a["y3"])),
        "scaled_copy": float(pairwise_cosine(a["x3"], 2.5 * a["x3"])),
        "negated": float(pairwise_cosine(a["x3"], -a["x3"])),
    }


def case_bertscore():
    a = inp.token_arrays()
    p2, r2, f2 = bert_score(a["x2"], a["y2"])
    pb, rb, fb = bert_score(a["x2"], a["yb"])
    ps, rs, fs = bert_score(a["x2"], 3.0 * a["x2"])
    return {"p2": p2, "r2": r2, "f2": f2, "pb": pb, "rb": rb, "fb": fb, "self": [ps, rs, fs]}


def case_toy_distances():
    abc = ToyABC()
    rng = np.random.default_rng(SEED + 61)
    thetas = np.vstack([inp.THETA_TRUE, rng.uniform(inp.LOWER, inp.UPPER, size=(6, 2))])
    return {"thetas": thetas, "distances": [float(abc._calculate_particle_distance(inp.trajectory(t))) for t in thetas]}


def case_weighted_quantile():
    x, w, alphas = inp.quantile_inputs()
    return {
        "weighted": [float(weighted_sample_quantile(x, a, weights=w)) for a in alphas],
        "unweighted": [float(weighted_sample_quantile(x, a)) for a in alphas],
    }


def case_particle_weight():
    abc = ToyABC()
    particles, weights, cov, _ = inp.population(0)
    rng = np.random.default_rng(SEED + 71)
    thetas = np.vstack([inp.THETA_TRUE + 0.3 * rng.normal(size=(5, 2)), [[3.5, 1.0]]])
    thetas[:5] = np.clip(thetas[:5], 0.01, 2.99)
    return {"thetas": thetas, "weights": [float(abc._calculate_particle_weight(t, particles, weights, cov)) for t in thetas]}


def case_proposals():
    abc = ToyABC()
    particles, weights, cov = inp.boundary_population()
    np.random.seed(SEED + 81)
    return np.array([abc._propose_particle_fast(particles, weights, cov) for _ in range(1500)])


def case_initial_population():
    abc = ToyABC()
    abc.generations = []
    np.random.seed(SEED + 91)
    abc._run_init(num_particles=30, k=4)
    g = abc.generations[0]
    return {
        "particles": g["particles"], "weights": g["weights"], "epsilon": float(g["epsilon"]),
        "cov": g["cov"], "sigma_max": float(g["sigma_max"]), "simulations": int(g["simulations"]),
        "meta_cov": g["meta"]["cov"], "n_generations": len(abc.generations),
    }


def case_pmc_generation():
    abc = ToyABC()
    abc.num_particles = 25
    particles, weights, cov, epsilon = inp.generation_inputs()
    np.random.seed(SEED + 101)
    new, w, d, sims = abc._run_generation(particles, weights, cov, epsilon)
    return {"particles": new, "weights": w, "distances": d, "simulations": int(sims)}


def case_adaptive_tolerance():
    abc = ToyABC()
    abc.densratio = DensityRatioEstimation(n=20, epsilon=0.001, max_iter=200, abs_tol=0.01, fold=5, optimize=False)
    prev, prev_w, prev_sigma_max, new, new_w, distances = inp.process_inputs()
    out = abc._process_generation_results(
        generation_num=2, particles=new, weights=new_w, distances=distances,
        prev_particles=prev, prev_weights=prev_w, prev_sigma_max=prev_sigma_max, simulations=77,
    )
    return {
        "t": out["t"], "particles": out["particles"], "weights": out["weights"], "epsilon": float(out["epsilon"]),
        "cov": out["cov"], "sigma_max": float(out["sigma_max"]), "qt": float(out["qt"]),
        "simulations": out["simulations"], "meta_cov": out["meta"]["cov"], "distances": out["distances"],
    }


def case_adaptive_tolerance_collapsed():
    """A new population far narrower than the previous one: a large density ratio."""
    abc = ToyABC()
    abc.densratio = DensityRatioEstimation(n=20, epsilon=0.001, max_iter=200, abs_tol=0.01, fold=5, optimize=False)
    prev, prev_w, prev_sigma_max, new, new_w, distances = inp.collapsed_inputs()
    out = abc._process_generation_results(
        generation_num=3, particles=new, weights=new_w, distances=distances,
        prev_particles=prev, prev_weights=prev_w, prev_sigma_max=prev_sigma_max, simulations=5,
    )
    return {"qt": float(out["qt"]), "epsilon": float(out["epsilon"]), "sigma_max": float(out["sigma_max"])}


def case_adaptive_tolerance_optimized():
    """The estimator's cross-validated basis scale (optimize=True) instead of the heuristic."""
    abc = ToyABC()
    abc.densratio = DensityRatioEstimation(n=10, epsilon=0.001, max_iter=40, abs_tol=0.01, fold=5, optimize=True)
    prev, prev_w, prev_sigma_max, new, new_w, distances = inp.process_inputs()
    out = abc._process_generation_results(
        generation_num=2, particles=new[:20], weights=new_w[:20], distances=distances[:20],
        prev_particles=prev[:20], prev_weights=prev_w[:20] / prev_w[:20].sum(), prev_sigma_max=prev_sigma_max, simulations=7,
    )
    return {"qt": float(out["qt"]), "epsilon": float(out["epsilon"]), "sigma": float(abc.densratio.sigma)}


def case_short_run():
    abc = SmallToyABC()
    np.random.seed(SEED + 111)
    abc.run(num_particles=40, q_threshold=0.99, max_generations=4, k=4)
    gens = abc.generations
    return {
        "epsilons": [float(g["epsilon"]) for g in gens],
        "weight_sums": [float(np.sum(g["weights"])) for g in gens],
        "means": [np.average(g["particles"], weights=g["weights"], axis=0) for g in gens],
        "vars": [np.average((g["particles"] - np.average(g["particles"], weights=g["weights"], axis=0)) ** 2,
                            weights=g["weights"], axis=0) for g in gens],
        "sizes": [len(g["particles"]) for g in gens],
        "qts": [float(g["qt"]) for g in gens[1:]],
    }
