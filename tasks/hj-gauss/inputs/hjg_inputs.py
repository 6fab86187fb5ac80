"""Inputs shared by the cases (run sandbox, with the authors' code) and the checks (check
sandbox, without it): seeded query points, the problem constants, the topology masks.
numpy only; the cases convert to jax arrays themselves.
"""

import os

import numpy as np

SEED = int(os.environ.get("RCB_SEED", "0"))

# Heat-kernel estimators on g(y) = |y|^2 and g(y) = a.y + b (closed forms in the checks).
T_END = 1.0
T_NOW = 0.5            # tau = T - t = 0.5
DELTA = 0.5            # sigma^2 = delta * tau = 0.25
N_SAMPLES = 2000
M_POINTS = 8           # every case evaluates 8 points with 2000 samples: one compile of each op
C_VALUES = np.array([0.5, 1.0, 2.0, 3.0, 1.0, 2.0, 0.75, 1.5], dtype=np.float32)
LINEAR_A = np.array([0.7, -1.3], dtype=np.float32)
LINEAR_B = 0.2

# Exact Cole-Hopf path: H = |p|^2 / 2, target a disc of radius R_TARGET.
# c = 1 / delta and sigma^2 = delta tau, so (c sigma)^2 = tau / delta = 1: the weights
# exp(-c g) stay well spread (a useful Monte-Carlo error bound with 2000 samples).
EXACT_DELTA = 0.3
EXACT_T = 0.7          # tau = 0.3: the inviscid zero level set is |x| = R + tau / 2 = 0.65
R_TARGET = 0.5
EXACT_SAMPLES = 2000
RAY = np.array([0.0, 0.15, 0.3, 0.45, 0.9, 1.1, 1.3, 1.5], dtype=np.float32)

# Quasi-linear path with H = kappa |p|^2 / 2 (frozen coefficient kappa / delta, clipped).
QL_DELTA = 0.5
QL_T = 0.5
QL_SAMPLES = 2000
QL_ITERS = 3
KAPPAS = (0.5, 2.0, -1.0)
C_MIN = 1e-4

# Double integrator (the authors' example, scaled down).
DI_DELTA = 0.08
DI_T = 0.5
DI_SAMPLES = 2000
DI_ITERS = 3
DI_RADIUS = 0.5


def query_points(offset, m, n, scale=1.0):
    """Seeded query points, uniform in [-scale, scale]^n (float32)."""
    rng = np.random.default_rng(SEED + offset)
    return rng.uniform(-scale, scale, size=(m, n)).astype(np.float32)


def di_points():
    """Seeded points in [-1.5, 1.5]^2 (position, velocity)."""
    return query_points(41, M_POINTS, 2, scale=1.5)


def disc(h, w, cy, cx, r):
    yy, xx = np.mgrid[0:h, 0:w]
    return (yy - cy) ** 2 + (xx - cx) ** 2 <= r ** 2


def topology_fields():
    """Value-like fields on a 64 x 64 grid: negative inside the sets, with hand-known
    (components, holes): thick shapes away from the border, so that 4- and 8-connectivity
    agree. A seeded shift moves every shape by a few pixels."""
    rng = np.random.default_rng(SEED + 53)
    dy, dx = rng.integers(-3, 4, size=2)
    h = w = 64

    def field(mask):
        return np.where(mask, -1.0, 1.0).astype(np.float32)

    fields, expected = {}, {}
    cy, cx = 32 + dy, 32 + dx
    fields["one_disc"] = field(disc(h, w, cy, cx, 12))
    expected["one_disc"] = (1, 0)
    fields["annulus"] = field(disc(h, w, cy, cx, 20) & ~disc(h, w, cy, cx, 9))
    expected["annulus"] = (1, 1)
    fields["three_discs"] = field(disc(h, w, 16 + dy, 16 + dx, 7) | disc(h, w, 16 + dy, 46 + dx, 8)
                                  | disc(h, w, 46 + dy, 30 + dx, 9))
    expected["three_discs"] = (3, 0)
    fields["annulus_and_disc"] = field((disc(h, w, 22 + dy, 22 + dx, 14) & ~disc(h, w, 22 + dy, 22 + dx, 6))
                                       | disc(h, w, 50 + dy, 48 + dx, 7))
    expected["annulus_and_disc"] = (2, 1)
    two_holes = disc(h, w, cy, cx, 24)
    two_holes &= ~disc(h, w, cy, cx - 11, 6)
    two_holes &= ~disc(h, w, cy, cx + 11, 6)
    fields["two_holes"] = field(two_holes)
    expected["two_holes"] = (1, 2)
    fields["empty"] = field(np.zeros((h, w), dtype=bool))
    expected["empty"] = (0, 0)
    # a smooth field: v = | |x| - 14 | - 5 (an annulus of radii 9 and 19), level -1 and 0
    yy, xx = np.mgrid[0:h, 0:w]
    rad = np.sqrt((yy - cy) ** 2 + (xx - cx) ** 2)
    fields["smooth_annulus"] = (np.abs(rad - 14.0) - 5.0).astype(np.float32)
    expected["smooth_annulus"] = (1, 1)
    return fields, expected
