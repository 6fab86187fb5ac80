"""PiSSA (Meng, Wang and Zhang, 2024): principal singular values and vectors adaptation, in numpy.

Convention: a linear layer maps inputs X of shape (b, m) to Y = X W, with the
weight W of shape (m, n). The adapter is A (m × r) times B (r × n).
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np


def randomized_svd(
    W: np.ndarray, q: int, niter: int, rng: np.random.Generator | None = None
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Approximate top-q SVD of W by a randomised range finder with niter subspace iterations.

    Returns U (m × q) with orthonormal columns, the q singular values S in
    descending order, and Vh (q × n) with orthonormal rows.
    """
    rng = np.random.default_rng(0) if rng is None else rng
    # <paper2code name="fast svd">
    # <paper2code name="randomized range finder">
    omega = rng.standard_normal((W.shape[1], q))
    Q, _ = np.linalg.qr(W @ omega)
    # </paper2code name="randomized range finder">
    # <paper2code name="subspace iterations">
    for _ in range(niter):
        Q, _ = np.linalg.qr(W.T @ Q)
        Q, _ = np.linalg.qr(W @ Q)
    # </paper2code name="subspace iterations">
    # <paper2code name="project and decompose">
    U_small, S, Vh = np.linalg.svd(Q.T @ W, full_matrices=False)
    U = Q @ U_small
    # </paper2code name="project and decompose">
    # </paper2code name="fast svd">
    return U, S, Vh


def pissa_init(
    W: np.ndarray, r: int, niter: int | None = None, rng: np.random.Generator | None = None
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Split W into the principal adapter (A, B) and the frozen residual W_res = W − A B.

    With ``niter`` None the exact SVD is used, otherwise the fast randomised SVD.
    """
    # <paper2code name="pissa initialization">
    # <paper2code name="singular value decomposition">
    if niter is None:
        U, S, Vh = np.linalg.svd(W, full_matrices=False)
    else:
        U, S, Vh = randomized_svd(W, r, niter, rng)
    # </paper2code name="singular value decomposition">
    # <paper2code name="principal adapter A">
    A = U[:, :r] * np.sqrt(S[:r])
    # </paper2code name="principal adapter A">
    # <paper2code name="principal adapter B">
    B = np.sqrt(S[:r])[:, None] * Vh[:r]
    # </paper2code name="principal adapter B">
    # <paper2code name="residual weight">
    W_res = W - A @ B
    # </paper2code name="residual weight">
    # </paper2code name="pissa initialization">
    return A, B, W_res


class PiSSALinear:
    """A linear layer Y = X (W_res + A B) with W_res frozen and the adapter A, B trainable."""

    def __init__(self, W: np.ndarray, r: int, niter: int | None = None, rng: np.random.Generator | None = None):
        self.A, self.B, self.W_res = pissa_init(np.asarray(W, dtype=float), r, niter, rng)
        self.A0, self.B0 = self.A.copy(), self.B.copy()

    def forward(self, X: np.ndarray) -> np.ndarray:
        # <paper2code name="adapter forward">
        return X @ self.W_res + (X @ self.A) @ self.B
        # </paper2code name="adapter forward">

    def gradients(self, X: np.ndarray, grad_Y: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """∂L/∂A and ∂L/∂B given the inputs X and ∂L/∂Y; W_res gets none."""
        # <paper2code name="adapter gradients">
        grad_A = X.T @ grad_Y @ self.B.T
        grad_B = (X @ self.A).T @ grad_Y
        return grad_A, grad_B
        # </paper2code name="adapter gradients">

    def sgd_step(self, X: np.ndarray, grad_Y: np.ndarray, lr: float) -> None:
        """One plain gradient-descent step on the adapter only."""
        # <paper2code name="adapter update">
        grad_A, grad_B = self.gradients(X, grad_Y)
        self.A -= lr * grad_A
        self.B -= lr * grad_B
        # </paper2code name="adapter update">

    def merged_weight(self) -> np.ndarray:
        """The weight the layer currently applies."""
        # <paper2code name="merge weights">
        return self.W_res + self.A @ self.B
        # </paper2code name="merge weights">

    def to_lora(self) -> tuple[np.ndarray, np.ndarray]:
        """LoRA factors (m × 2r, 2r × n) whose product, added to the original W, gives the trained weight."""
        # <paper2code name="convert to lora">
        A_lora = np.concatenate([self.A, self.A0], axis=1)
        B_lora = np.concatenate([self.B, -self.B0], axis=0)
        return A_lora, B_lora
        # </paper2code name="convert to lora">


def nuclear_norm(M: np.ndarray) -> float:
    """The sum of the singular values of M."""
    return float(np.linalg.svd(M, compute_uv=False).sum())


def absmax_quantize(W: np.ndarray, bits: int = 4, block: int = 64) -> np.ndarray:
    """Quantise and dequantise W with a symmetric uniform grid per block of ``block`` values
    (a simple stand-in for NF4)."""
    flat = W.reshape(-1)
    pad = (-flat.size) % block
    blocks = np.concatenate([flat, np.zeros(pad)]).reshape(-1, block)
    levels = 2 ** (bits - 1) - 1
    scale = np.abs(blocks).max(axis=1, keepdims=True) / levels
    scale[scale == 0] = 1.0
    deq = np.clip(np.round(blocks / scale), -levels, levels) * scale
    return deq.reshape(-1)[: flat.size].reshape(W.shape)


def quantization_error_reduction(
    W: np.ndarray, r: int, quantize: Callable[[np.ndarray], np.ndarray] = absmax_quantize
) -> float:
    """The quantisation error reduction ratio of QPiSSA over QLoRA, in percent."""
    A, B, W_res = pissa_init(W, r)
    # <paper2code name="quantization error reduction">
    error_qlora = nuclear_norm(W - quantize(W))
    error_qpissa = nuclear_norm(W - (quantize(W_res) + A @ B))
    return 100.0 * (1.0 - error_qpissa / error_qlora)
    # </paper2code name="quantization error reduction">
