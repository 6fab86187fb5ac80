"""Inputs regenerated in numpy (the check sandbox has neither JAX nor diffqcp), exactly as
cases/cases_diffqcp.py draws them from RCB_SEED, and the closed forms the checks use."""

import os

import numpy as np

SEED = int(os.environ.get("RCB_SEED", "0"))

PROGRAMS = {
    "qp": (11, 8, {"z": 2, "l": 8}),
    "mixed": (12, 10, {"z": 2, "l": 4, "q": [3, 3, 4]}),
}


def program(offset, n, cones):
    """P, A, q, b and the solution x, y, s (the cases' `program`, cones z, l, q only)."""
    rng = np.random.default_rng(1000 * SEED + offset)
    B = rng.standard_normal((n, n))
    P = B @ B.T / n + 0.1 * np.eye(n)
    x = rng.standard_normal(n)
    ys, ss = [], []
    if cones.get("z", 0):
        ys.append(rng.standard_normal(cones["z"]))
        ss.append(np.zeros(cones["z"]))
    if cones.get("l", 0):
        k = cones["l"]
        active = np.arange(k) % 2 == 0
        rng.shuffle(active)
        mag = rng.uniform(0.5, 1.5, size=k)
        ys.append(np.where(active, mag, 0.0))
        ss.append(np.where(active, 0.0, mag))
    for i, k in enumerate(cones.get("q", [])):
        w = rng.standard_normal(k - 1)
        a, c = rng.uniform(0.5, 1.5, size=2)
        u = w / np.linalg.norm(w)
        if i % 3 == 0:
            y, s = c * np.concatenate([[1.0], u]), a * np.concatenate([[1.0], -u])
        elif i % 3 == 1:
            y, s = np.zeros(k), np.concatenate([[np.linalg.norm(w) + a], w])
        else:
            y, s = np.concatenate([[np.linalg.norm(w) + c], w]), np.zeros(k)
        ys.append(y)
        ss.append(s)
    y, s = np.concatenate(ys), np.concatenate(ss)
    A = rng.standard_normal((y.size, n))
    return P, A, -P @ x - A.T @ y, A @ x + s, x, y, s


def directions(offset, n, m, count):
    rng = np.random.default_rng(1000 * SEED + offset + 500)
    return [
        (rng.standard_normal(n * (n + 1) // 2), rng.standard_normal((m, n)), rng.standard_normal(n), rng.standard_normal(m))
        for _ in range(count)
    ]


def vjp_directions(name, count=3):
    offset, n, cones = PROGRAMS[name]
    m = program(offset, n, cones)[1].shape[0]
    rng = np.random.default_rng(1000 * SEED + offset + 700)
    return [(rng.standard_normal(n), rng.standard_normal(m), rng.standard_normal(m)) for _ in range(count)]


def embedding_point(offset):
    rng = np.random.default_rng(1000 * SEED + offset)
    n, m = 4, 5
    B = rng.standard_normal((n, n))
    P = B @ B.T / n
    A = rng.standard_normal((m, n))
    q, b = rng.standard_normal(n), rng.standard_normal(m)
    x, y = rng.standard_normal(n), rng.standard_normal(m)
    tau = rng.uniform(0.4, 2.5)
    return P, A, q, b, x, y, tau


def adjoint_vectors(n, m, count=3):
    rng = np.random.default_rng(1000 * SEED + 3)
    return [rng.standard_normal(n + m + 1) for _ in range(count)]


def soc_points(offset):
    rng = np.random.default_rng(1000 * SEED + offset)
    blocks = []
    for i, k in enumerate((3, 3, 5, 4)):
        z = rng.standard_normal(k - 1)
        nz = np.linalg.norm(z)
        kind = (i + SEED) % 3
        t = {0: nz + rng.uniform(0.3, 1.0), 1: -nz - rng.uniform(0.3, 1.0), 2: rng.uniform(-0.8, 0.8) * nz}[kind]
        blocks.append(np.concatenate([[t], z]))
    return np.concatenate(blocks)


def upper_to_full(values, n):
    """The symmetric matrix whose upper triangle (row-major) is `values`."""
    U = np.zeros((n, n))
    U[np.triu_indices(n)] = values
    return U + U.T - np.diag(np.diag(U))


def embedding_residual(P, A, q, b, x, y, tau):
    """The homogeneous embedding's residual map Q(u) at u = (x, y, tau) (the paper's
    nonlinear homogeneous embedding of the QCP's optimality conditions)."""
    Px = P @ x
    return np.concatenate([Px + A.T @ y + tau * q, -A @ x + tau * b, [-(x @ Px) / tau - q @ x - b @ y]])


def embedding_jacobian(P, A, q, b, x, y, tau):
    """D_u Q(u), by central differences of `embedding_residual` (Q is quadratic in (x, y)
    and rational in tau: the step leaves an error of order 1e-9)."""
    n, m = x.size, y.size
    u = np.concatenate([x, y, [tau]])
    J = np.zeros((n + m + 1, n + m + 1))
    h = 1e-5
    for j in range(n + m + 1):
        e = np.zeros(n + m + 1)
        e[j] = h
        up, um = u + e, u - e
        J[:, j] = (embedding_residual(P, A, q, b, up[:n], up[n:n + m], up[-1])
                   - embedding_residual(P, A, q, b, um[:n], um[n:n + m], um[-1])) / (2 * h)
    return J


def soc_projection(v):
    t, z = v[0], v[1:]
    nz = np.linalg.norm(z)
    if nz <= t:
        return v.copy()
    if nz <= -t:
        return np.zeros_like(v)
    return 0.5 * (1 + t / nz) * np.concatenate([[nz], z])


def soc_jacobian(v):
    """The projection's Jacobian onto one second-order cone, in closed form (Parikh and Boyd)."""
    k = v.size
    t, z = v[0], v[1:]
    nz = np.linalg.norm(z)
    if nz <= t:
        return np.eye(k)
    if nz <= -t:
        return np.zeros((k, k))
    u = z / nz
    J = np.zeros((k, k))
    J[0, 0] = 1.0
    J[0, 1:] = J[1:, 0] = u
    J[1:, 1:] = (t + nz) / nz * np.eye(k - 1) - (t / nz) * np.outer(u, u)
    return J / 2


def qp_derivative(P, A, x, y, s, dP, dA, dq, db):
    """dx, dy, ds of a program with zero and nonnegative cones only, by differentiating
    its optimality conditions on the (fixed, strictly complementary) active set:
    P x + q + A^T y = 0, A_i x = b_i on the active rows (s_i = 0), y_i = 0 elsewhere."""
    n = x.size
    act = s == 0
    Aa = A[act]
    K = np.block([[P, Aa.T], [Aa, np.zeros((Aa.shape[0], Aa.shape[0]))]])
    rhs = np.concatenate([-dP @ x - dq - dA.T @ y, (db - dA @ x)[act]])
    sol = np.linalg.solve(K, rhs)
    dx = sol[:n]
    dy = np.zeros_like(y)
    dy[act] = sol[n:]
    ds = db - dA @ x - A @ dx
    return dx, dy, ds
