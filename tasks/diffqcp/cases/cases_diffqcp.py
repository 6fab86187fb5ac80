"""Cases for diffqcp: each drives the authors' code on seeded quadratic cone programs
and returns what it computed (the homogeneous embedding's Jacobian and its adjoint
as matrices, the data derivative and its adjoint, second-order cone projections and
their Jacobians, and JVPs and VJPs of the solution map).

Every program is built with a known primal-dual solution: x is drawn, then a slack
s in K and a dual y in K* with s^T y = 0 and strict complementarity, and
b = A x + s, q = -P x - A^T y make (x, y, s) optimal. Nothing is solved here. The
checks (another sandbox, without this code) regenerate the same programs from
RCB_SEED and compare with finite differences of the solution map, which they compute
by re-solving the perturbed programs with their own numpy Newton iteration.
"""

import os

import numpy as np
import jax

jax.config.update("jax_enable_x64", True)  # before diffqcp is imported: its EPS depends on it
jax.config.update("jax_disable_most_optimizations", True)  # compile fast: the programs are tiny

import equinox as eqx  # noqa: E402
import jax.numpy as jnp  # noqa: E402
from jax.experimental.sparse import BCOO  # noqa: E402

from diffqcp import HostQCP, QCPStructureCPU  # noqa: E402
from diffqcp.cones.canonical import ProductConeProjector, SecondOrderConeProjector  # noqa: E402
from diffqcp.qcp_derivs import _DuQ, _d_data_Q, _d_data_Q_adjoint_cpu  # noqa: E402

SEED = int(os.environ.get("RCB_SEED", "0"))

# The programs of the JVP/VJP cases: (seed offset, n, cones in SCS's dict form).
PROGRAMS = {
    "qp": (11, 8, {"z": 2, "l": 8}),
    "mixed": (12, 10, {"z": 2, "l": 4, "q": [3, 3, 4]}),
}


# ---- programs with a known solution (checks/_qcp.py builds them the same way) ----------


def _psd_vec(X):
    rows, cols = np.triu_indices(X.shape[0])
    return X[rows, cols] * np.where(rows == cols, 1.0, np.sqrt(2.0))


def program(offset, n, cones):
    """P (n x n, positive definite), A, q, b and the solution x, y, s."""
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
        if i % 3 == 0:  # both on the boundary, on opposite rays
            y, s = c * np.concatenate([[1.0], u]), a * np.concatenate([[1.0], -u])
        elif i % 3 == 1:  # s in the interior, y = 0
            y, s = np.zeros(k), np.concatenate([[np.linalg.norm(w) + a], w])
        else:  # y in the interior, s = 0
            y, s = np.concatenate([[np.linalg.norm(w) + c], w]), np.zeros(k)
        ys.append(y)
        ss.append(s)
    for k in cones.get("s", []):
        Q, _ = np.linalg.qr(rng.standard_normal((k, k)))
        lam = rng.uniform(0.5, 1.5, size=k)
        on_y = np.arange(k) < (k + 1) // 2
        ys.append(_psd_vec(Q @ np.diag(np.where(on_y, lam, 0.0)) @ Q.T))
        ss.append(_psd_vec(Q @ np.diag(np.where(on_y, 0.0, lam)) @ Q.T))
    y, s = np.concatenate(ys), np.concatenate(ss)
    A = rng.standard_normal((y.size, n))
    return P, A, -P @ x - A.T @ y, A @ x + s, x, y, s


def directions(offset, n, m, count):
    """Perturbations (dP upper triangle in row-major order, dA, dq, db)."""
    rng = np.random.default_rng(1000 * SEED + offset + 500)
    return [
        (rng.standard_normal(n * (n + 1) // 2), rng.standard_normal((m, n)), rng.standard_normal(n), rng.standard_normal(m))
        for _ in range(count)
    ]


def sparse_upper(P):
    """P's upper triangle as a BCOO matrix, entries in row-major order (as BCOO.fromdense
    gives them for a dense P, without its slow eager compile)."""
    rows, cols = np.triu_indices(P.shape[0])
    return BCOO((jnp.array(P[rows, cols]), jnp.array(np.stack([rows, cols], axis=1))), shape=P.shape)


def sparse_full(A):
    """A dense A as a BCOO matrix with every entry stored, in row-major order."""
    rows, cols = np.indices(A.shape).reshape(2, -1)
    return BCOO((jnp.array(A[rows, cols]), jnp.array(np.stack([rows, cols], axis=1))), shape=A.shape)


def host_qcp(P, A, q, b, x, y, s, cones):
    P_upper = sparse_upper(P)
    A_sp = sparse_full(A)
    structure = QCPStructureCPU(P_upper, A_sp, cones)
    qcp = HostQCP(P_upper, A_sp, jnp.array(q), jnp.array(b), jnp.array(x), jnp.array(y), jnp.array(s), structure)
    return qcp, P_upper, A_sp


def as_matrix(operator, size):
    """The matrix of a linear operator: its mv applied to the identity's columns."""
    return eqx.filter_jit(lambda op: jax.vmap(op.mv, in_axes=1, out_axes=1)(jnp.eye(size)))(operator)


def _is_float_array(leaf):
    return isinstance(leaf, jax.Array) and jnp.issubdtype(leaf.dtype, jnp.floating)


def compiled(method, **kwargs):
    """qcp.METHOD(*args) compiled as the authors' tests compile it: floating arrays are
    traced, everything else (sparsity patterns, masks) is closed over as a constant.
    Later calls must share the first call's static parts (the same program)."""
    cache = {}

    def run(*tree):
        traced, static = eqx.partition(list(tree), _is_float_array)
        if "f" not in cache:

            def call(traced):
                qcp, *args = eqx.combine(traced, static)
                return getattr(qcp, method)(*args, **kwargs)

            cache["f"] = eqx.filter_jit(call)
        return cache["f"](traced)

    return run


# ---- the homogeneous embedding's derivatives ----------------------------------------------


def embedding_point(offset):
    """P, A, q, b and a point u = (x, y, tau) of the embedding, tau away from 1."""
    rng = np.random.default_rng(1000 * SEED + offset)
    n, m = 4, 5
    B = rng.standard_normal((n, n))
    P = B @ B.T / n
    A = rng.standard_normal((m, n))
    q, b = rng.standard_normal(n), rng.standard_normal(m)
    x, y = rng.standard_normal(n), rng.standard_normal(m)
    tau = rng.uniform(0.4, 2.5)
    return P, A, q, b, x, y, tau


def case_embedding_jacobian():
    """D_u Q at u = (x, y, tau) and its adjoint, as (n+m+1)-square matrices."""
    P, A, q, b, x, y, tau = embedding_point(1)
    n, m = A.shape[1], A.shape[0]
    P_upper = sparse_upper(P)
    A_sp = sparse_full(A)
    structure = QCPStructureCPU(P_upper, A_sp, {"z": m})

    @jax.jit
    def matrices(P_data, A_data, q, b, x, tau):
        P_obj = structure.form_obj(BCOO((P_data, P_upper.indices), shape=(n, n)))
        A_sp_ = BCOO((A_data, A_sp.indices), shape=(m, n))
        Px = P_obj.mv(x)
        DuQ = _DuQ(P=P_obj, Px=Px, xTPx=x @ Px, A=A_sp_, AT=A_sp_.T, q=q, b=b, x=x, tau=tau, n=n, m=m)
        eye = jnp.eye(n + m + 1)
        return jax.vmap(DuQ.mv, in_axes=1, out_axes=1)(eye), jax.vmap(DuQ.T.mv, in_axes=1, out_axes=1)(eye)

    DuQ, DuQ_T = matrices(P_upper.data, A_sp.data, jnp.array(q), jnp.array(b), jnp.array(x), jnp.array(tau))
    return {"DuQ": DuQ, "DuQ_T": DuQ_T}


def case_data_derivative():
    """D_data Q(u)[dP, dA, dq, db] for a few perturbations, and its adjoint applied to
    a few vectors w (values on P's upper triangle and A's pattern, dq, db)."""
    P, A, q, b, x, y, tau = embedding_point(2)
    n, m = A.shape[1], A.shape[0]
    P_upper = sparse_upper(P)
    A_sp = sparse_full(A)
    structure = QCPStructureCPU(P_upper, A_sp, {"z": m})
    xj, yj, tauj = jnp.array(x), jnp.array(y), jnp.array(tau)

    @jax.jit
    def forward_one(dP, dA, dq, db):
        dP_upper = BCOO((dP, P_upper.indices), shape=(n, n))
        dA_sp = BCOO((dA, A_sp.indices), shape=(m, n))
        return _d_data_Q(x=xj, y=yj, tau=tauj, dP=structure.form_obj(dP_upper), dA=dA_sp,
                         dAT=dA_sp.T, dq=dq, db=db)

    @jax.jit
    def adjoint_one(w):
        dP, dA, dq, db = _d_data_Q_adjoint_cpu(
            xj, yj, tauj, w[:n], w[n:n + m], w[-1],
            P_rows=structure.P_nonzero_rows, P_cols=structure.P_nonzero_cols,
            A_rows=structure.A_nonzero_rows, A_cols=structure.A_nonzero_cols, n=n, m=m)
        return {"dP": dP.data, "dP_indices": dP.indices, "dA": dA.data, "dA_indices": dA.indices,
                "dq": dq, "db": db}

    forward = [forward_one(jnp.array(dP), jnp.array(dA.ravel()), jnp.array(dq), jnp.array(db))
               for dP, dA, dq, db in directions(2, n, m, 3)]
    rng = np.random.default_rng(1000 * SEED + 3)
    adjoint = [adjoint_one(jnp.array(rng.standard_normal(n + m + 1))) for _ in range(3)]
    return {"forward": forward, "adjoint": adjoint}


# ---- projections onto second-order cones --------------------------------------------------


def soc_points(offset):
    """Points in three second-order cones (dims 3, 3, 5): one inside the cone, one inside
    the polar cone, one outside both, in an order set by the seed."""
    rng = np.random.default_rng(1000 * SEED + offset)
    blocks = []
    for i, k in enumerate((3, 3, 5, 4)):
        z = rng.standard_normal(k - 1)
        nz = np.linalg.norm(z)
        kind = (i + SEED) % 3
        t = {0: nz + rng.uniform(0.3, 1.0), 1: -nz - rng.uniform(0.3, 1.0), 2: rng.uniform(-0.8, 0.8) * nz}[kind]
        blocks.append(np.concatenate([[t], z]))
    return np.concatenate(blocks)


def case_soc_projection():
    """The projection onto K = Q^3 x Q^3 x Q^5 x Q^4 and its Jacobian (a matrix), through
    the cone projector diffqcp uses (two cones of one size go through its vmap path)."""
    v = jnp.array(soc_points(4))
    soc = SecondOrderConeProjector([3, 3, 5, 4])
    product = ProductConeProjector({"z": 2, "l": 3, "q": [3, 3, 5, 4]}, onto_dual=True)

    @jax.jit
    def project(v):
        proj, dproj = soc(v)
        w = jnp.concatenate([jnp.array([0.7, -1.3, 0.4, -0.2, 0.0]), v])
        proj_w, dproj_w = product(w)
        jac = jax.vmap(dproj.mv, in_axes=1, out_axes=1)(jnp.eye(v.size))
        jac_w = jax.vmap(dproj_w.mv, in_axes=1, out_axes=1)(jnp.eye(w.size))
        return {"proj": proj, "jacobian": jac, "product_proj": proj_w, "product_jacobian": jac_w}

    return project(v)


# ---- derivative and adjoint of the solution map -----------------------------------------


def _jvps(name, count=3, solve_method="jax-lsmr"):
    offset, n, cones = PROGRAMS[name]
    P, A, q, b, x, y, s = program(offset, n, cones)
    m = A.shape[0]
    qcp, P_upper, A_sp = host_qcp(P, A, q, b, x, y, s, cones)
    jvp = compiled("jvp", solve_method=solve_method)
    results = []
    for dP, dA, dq, db in directions(offset, n, m, count):
        dP_upper = BCOO((jnp.array(dP), P_upper.indices), shape=(n, n))
        dA_sp = BCOO((jnp.array(dA.ravel()), A_sp.indices), shape=(m, n))
        dx, dy, ds = jvp(qcp, dP_upper, dA_sp, jnp.array(dq), jnp.array(db))
        results.append({"dx": dx, "dy": dy, "ds": ds})
    return results


def _vjps(name, count=3):
    offset, n, cones = PROGRAMS[name]
    P, A, q, b, x, y, s = program(offset, n, cones)
    m = A.shape[0]
    qcp, _, _ = host_qcp(P, A, q, b, x, y, s, cones)
    rng = np.random.default_rng(1000 * SEED + offset + 700)
    vjp = compiled("vjp", solve_method="jax-lsmr")
    results = []
    for _ in range(count):
        dx, dy, ds = rng.standard_normal(n), rng.standard_normal(m), rng.standard_normal(m)
        dP, dA, dq, db = vjp(qcp, jnp.array(dx), jnp.array(dy), jnp.array(ds))
        results.append({"dP": dP.data, "dP_indices": dP.indices, "dA": dA.data, "dA_indices": dA.indices,
                        "dq": dq, "db": db})
    return results


def case_jvp_qp():
    return _jvps("qp")


def case_vjp_qp():
    return _vjps("qp")
