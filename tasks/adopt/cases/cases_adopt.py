"""Cases for ADOPT: each drives the optimiser on fixed inputs and returns its state.

These run with the code under test; the checks (another sandbox) compare what they
return with values worked out by hand from the algorithm and with the reference.
"""

import os

import numpy as np
from adopt import ADOPT

SEED = int(os.environ.get("RCB_SEED", "0"))


def arr(*values):
    return np.array(values, dtype=float)


def state(opt, params):
    return {"params": [p.copy() for p in params], "m": list(opt.m), "v": list(opt.v), "t": opt.t}


def case_first_step():
    p = arr(1.0, -2.0)
    opt = ADOPT([p], lr=0.1)
    opt.step([arr(0.5, -3.0)])
    return state(opt, [p])


def case_first_step_random():
    rng = np.random.default_rng(SEED)
    params = [rng.normal(size=(3, 4)), rng.normal(size=5)]
    grads = [rng.normal(size=(3, 4)), rng.normal(size=5)]
    copies = [p.copy() for p in params]
    opt = ADOPT(copies)
    opt.step(grads)
    return state(opt, copies)


def case_coupled_weight_decay():
    p = arr(2.0)
    opt = ADOPT([p], lr=0.5, weight_decay=0.1, decoupled=False)
    opt.step([arr(1.0)])
    return state(opt, [p])


def case_decoupled_weight_decay():
    p = arr(2.0)
    opt = ADOPT([p], lr=0.5, weight_decay=0.1, decoupled=True)
    opt.step([arr(1.0)])
    return state(opt, [p])


def case_second_step():
    p = arr(1.0)
    opt = ADOPT([p], lr=0.1, betas=(0.9, 0.99), eps=1e-6)
    opt.step([arr(2.0)])
    opt.step([arr(1.0)])
    return state(opt, [p])


def case_normalizer_excludes_current_gradient():
    p = arr(0.0)
    opt = ADOPT([p], lr=1.0, betas=(0.9, 0.5), clip=None)
    opt.step([arr(1.0)])
    opt.step([arr(100.0)])
    return state(opt, [p])


def case_eps_floor():
    p = arr(0.0)
    opt = ADOPT([p], lr=1.0, betas=(0.5, 0.9), eps=1e-2, clip=None)
    opt.step([arr(0.0)])
    opt.step([arr(1e-3)])
    return state(opt, [p])


def _run_constant(clip, steps):
    # beta2 = 1 keeps v at v_0 = 1e-4, so each normalised gradient is 1 / 0.01 = 100.
    p = arr(0.0)
    opt = ADOPT([p], lr=0.01, betas=(0.0, 1.0), clip=clip)
    opt.step([arr(0.01)])
    for _ in range(steps):
        opt.step([arr(1.0)])
    return state(opt, [p])


def case_clipping_at_step_power():
    return _run_constant(lambda t: t**0.25, 16)


def case_no_clip_when_disabled():
    return _run_constant(None, 3)


def case_momentum_accumulates():
    p = arr(0.0)
    opt = ADOPT([p], lr=1.0, betas=(0.5, 1.0), clip=None)
    opt.step([arr(2.0)])
    ms = []
    for _ in range(3):
        opt.step([arr(1.0)])
        ms.append(float(opt.m[0][0]))
    return {**state(opt, [p]), "ms": ms}


def case_second_moment_after_two_steps():
    p = arr(0.0)
    opt = ADOPT([p], lr=0.1, betas=(0.9, 0.9))
    for g in (2.0, 1.0, 3.0):
        opt.step([arr(g)])
    return state(opt, [p])


def case_quadratic():
    target = arr(3.0, -1.0, 0.5)
    theta = np.zeros(3)
    opt = ADOPT([theta], lr=0.02, betas=(0.9, 0.999))
    trajectory = []
    for step in range(3000):
        opt.step([theta - target])
        if step % 300 == 0:
            trajectory.append(theta.copy())
    return {**state(opt, [theta]), "trajectory": trajectory}


def case_random_walk():
    """Many steps on random gradients, with every option on: the whole state is compared
    with the reference's."""
    rng = np.random.default_rng(SEED + 7)
    params = [rng.normal(size=(4, 3)), rng.normal(size=6)]
    opt = ADOPT(params, lr=0.01, betas=(0.8, 0.95), eps=1e-4, weight_decay=0.05, decoupled=True)
    for _ in range(25):
        opt.step([rng.normal(size=p.shape) for p in params])
    return state(opt, params)


def case_random_walk_coupled():
    rng = np.random.default_rng(SEED + 11)
    params = [rng.normal(size=5)]
    opt = ADOPT(params, lr=0.05, betas=(0.9, 0.9), weight_decay=0.1, decoupled=False, clip=None)
    for _ in range(20):
        opt.step([rng.normal(size=5)])
    return state(opt, params)
