"""Muon with weight decay and update-RMS matching (Liu et al., 2025) for numpy arrays.

Matrix parameters (ndim >= 2) are updated by Muon; every other parameter (vectors,
scalars) by AdamW with the same learning rate and weight decay, as in the paper.
"""

from __future__ import annotations

import math

import numpy as np

# Coefficients (a, b, c) of the quintic Newton-Schulz iteration.
NS_COEFFS = (3.4445, -4.7750, 2.0315)


def newton_schulz(G: np.ndarray, steps: int = 5, eps: float = 1e-7) -> np.ndarray:
    """Approximately orthogonalise a 2-D matrix G: map G = U S V^T towards U V^T.

    The result has the shape of G. Each iteration maps X to a X + b (X X^T) X + c (X X^T)^2 X.
    """
    # <paper2code name="newton schulz">
    a, b, c = NS_COEFFS
    X = np.array(G, dtype=np.float64)
    transposed = X.shape[0] > X.shape[1]
    if transposed:
        X = X.T
    # <paper2code name="frobenius normalisation">
    X = X / (np.linalg.norm(X) + eps)
    # </paper2code name="frobenius normalisation">
    # <paper2code name="newton schulz iteration">
    for _ in range(steps):
        A = X @ X.T
        B = b * A + c * A @ A
        X = a * X + B @ X
    # </paper2code name="newton schulz iteration">
    if transposed:
        X = X.T
    return X
    # </paper2code name="newton schulz">


def adjusted_lr(lr: float, shape: tuple[int, ...]) -> float:
    """The learning rate of a Muon update of an A x B matrix after update-RMS matching."""
    # <paper2code name="update rms matching">
    A, B = shape[:2]
    return lr * 0.2 * math.sqrt(max(A, B))
    # </paper2code name="update rms matching">


class Muon:
    """Muon (matrices) plus AdamW (all other parameters), updated in place.

    Args:
        params: parameter arrays (float), updated in place by :meth:`step`.
        lr: learning rate η, shared by the Muon and AdamW parts.
        momentum: Muon momentum μ.
        nesterov: Nesterov-style momentum (the default) instead of plain momentum.
        ns_steps: Newton-Schulz iterations.
        weight_decay: decoupled weight decay λ, shared by both parts.
        adamw_betas: (β1, β2) of the AdamW part.
        adamw_eps: ε of the AdamW part.
    """

    def __init__(
        self,
        params: list[np.ndarray],
        lr: float = 1e-3,
        momentum: float = 0.95,
        nesterov: bool = True,
        ns_steps: int = 5,
        weight_decay: float = 0.1,
        adamw_betas: tuple[float, float] = (0.9, 0.95),
        adamw_eps: float = 1e-8,
    ) -> None:
        self.params = params
        self.lr = lr
        self.momentum = momentum
        self.nesterov = nesterov
        self.ns_steps = ns_steps
        self.weight_decay = weight_decay
        self.beta1, self.beta2 = adamw_betas
        self.eps = adamw_eps
        self.t = 0  # steps taken
        self.B = [np.zeros_like(p) for p in params]  # Muon momentum buffers (matrices)
        self.m = [np.zeros_like(p) for p in params]  # AdamW first moments (non-matrices)
        self.v = [np.zeros_like(p) for p in params]  # AdamW second moments (non-matrices)

    def step(self, grads: list[np.ndarray]) -> None:
        """One optimiser step given the gradients of every parameter."""
        # <paper2code name="muon step">
        self.t += 1
        for i, (W, G) in enumerate(zip(self.params, grads)):
            if W.ndim < 2:
                self._adamw(i, W, G)
                continue
            # <paper2code name="muon momentum">
            self.B[i] = self.momentum * self.B[i] + G
            if self.nesterov:
                M = self.momentum * self.B[i] + G
            else:
                M = self.B[i]
            # </paper2code name="muon momentum">
            O = newton_schulz(M, self.ns_steps)
            # <paper2code name="decoupled weight decay">
            W *= 1.0 - self.lr * self.weight_decay
            # </paper2code name="decoupled weight decay">
            # <paper2code name="apply muon update">
            W -= adjusted_lr(self.lr, W.shape) * O
            # </paper2code name="apply muon update">
        # </paper2code name="muon step">

    def _adamw(self, i: int, W: np.ndarray, G: np.ndarray) -> None:
        """AdamW on a non-matrix parameter (step count self.t, already advanced)."""
        # <paper2code name="adamw moments">
        self.m[i] = self.beta1 * self.m[i] + (1.0 - self.beta1) * G
        self.v[i] = self.beta2 * self.v[i] + (1.0 - self.beta2) * G * G
        # </paper2code name="adamw moments">
        # <paper2code name="adamw update">
        m_hat = self.m[i] / (1.0 - self.beta1**self.t)
        v_hat = self.v[i] / (1.0 - self.beta2**self.t)
        W *= 1.0 - self.lr * self.weight_decay
        W -= self.lr * m_hat / (np.sqrt(v_hat) + self.eps)
        # </paper2code name="adamw update">


def distributed_muon_step(
    W_shards: list[np.ndarray],
    B_shards: list[np.ndarray],
    rank_grads: list[np.ndarray],
    shape: tuple[int, int],
    lr: float,
    momentum: float = 0.95,
    weight_decay: float = 0.1,
    ns_steps: int = 5,
) -> None:
    """One step of Distributed Muon (ZeRO-1 data parallelism), simulated on one machine.

    Rank r holds W_shards[r] and B_shards[r]: its contiguous slice of the row-major
    flattened parameter and Nesterov momentum buffer (updated in place), and computed
    rank_grads[r], a full gradient of the given shape on its own data.
    """
    bounds = np.cumsum([0] + [len(s) for s in W_shards])
    ranks = range(len(W_shards))
    # <paper2code name="reduce-scatter gradient">
    G = np.mean(np.stack(rank_grads), axis=0).reshape(-1)
    g = [G[bounds[r] : bounds[r + 1]] for r in ranks]
    # </paper2code name="reduce-scatter gradient">
    # <paper2code name="partitioned momentum">
    local = []
    for r in ranks:
        B_shards[r] *= momentum
        B_shards[r] += g[r]
        local.append(momentum * B_shards[r] + g[r])
    # </paper2code name="partitioned momentum">
    # <paper2code name="gather and orthogonalise">
    U = newton_schulz(np.concatenate(local).reshape(shape), ns_steps)
    # </paper2code name="gather and orthogonalise">
    # <paper2code name="keep local partition">
    u = U.reshape(-1)
    for r in ranks:
        W_shards[r] *= 1.0 - lr * weight_decay
        W_shards[r] -= adjusted_lr(lr, shape) * u[bounds[r] : bounds[r + 1]]
    # </paper2code name="keep local partition">
