"""SOAP: Shampoo's eigenbasis with Adam run inside it (Vyas et al., 2024), for numpy arrays.

Matrices W (m x n) are preconditioned on each side whose size is at most
max_precond_dim; a side that is larger, and every 1-D parameter, is left
unrotated (a None basis stands for the identity), so a parameter with no
rotated side is updated by plain AdamW.
"""

from __future__ import annotations

import numpy as np


def project(X: np.ndarray, QL: np.ndarray | None, QR: np.ndarray | None) -> np.ndarray:
    """Rotate X into the eigenbasis: Q_L^T X Q_R (a None basis is the identity)."""
    # <paper2code name="project">
    if QL is not None:
        X = QL.T @ X
    if QR is not None:
        X = X @ QR
    return X
    # </paper2code name="project">


def project_back(X: np.ndarray, QL: np.ndarray | None, QR: np.ndarray | None) -> np.ndarray:
    """Rotate X back from the eigenbasis: Q_L X Q_R^T (a None basis is the identity)."""
    # <paper2code name="project back">
    if QL is not None:
        X = QL @ X
    if QR is not None:
        X = X @ QR.T
    return X
    # </paper2code name="project back">


def eigenbasis(P: np.ndarray) -> np.ndarray:
    """Eigenvectors of the symmetric matrix P as columns, by decreasing eigenvalue."""
    # <paper2code name="initial eigenbasis">
    _, Q = np.linalg.eigh(P)
    return Q[:, ::-1]
    # </paper2code name="initial eigenbasis">


def refresh_eigenbasis(
    P: np.ndarray, Q: np.ndarray, V: np.ndarray, axis: int
) -> tuple[np.ndarray, np.ndarray]:
    """One power-iteration step with QR from the previous basis Q towards P's eigenvectors.

    The columns of Q are first put in decreasing order of their estimated eigenvalues
    q^T P q, and the second moment V (stored in the rotated basis) is permuted the
    same way along `axis`. Returns the new basis and the permuted V.
    """
    # <paper2code name="power iteration with qr">
    estimated = np.diag(Q.T @ P @ Q)
    order = np.argsort(-estimated, kind="stable")
    Q = Q[:, order]
    V = np.take(V, order, axis=axis)
    Q_new, _ = np.linalg.qr(P @ Q)
    return Q_new, V
    # </paper2code name="power iteration with qr">


class SOAP:
    """SOAP over a list of numpy parameter arrays (1-D or 2-D), updated in place.

    Args:
        params: parameter arrays (float), updated in place by :meth:`step`.
        lr: learning rate η.
        betas: (β1, β2) of Adam.
        shampoo_beta: EMA rate of the preconditioner factors L and R; None means β2.
        eps: ε of Adam.
        weight_decay: decoupled weight decay λ.
        precondition_frequency: f; the eigenbases are refreshed every f updates.
        max_precond_dim: sides larger than this are not rotated.
    """

    def __init__(
        self,
        params: list[np.ndarray],
        lr: float = 3e-3,
        betas: tuple[float, float] = (0.95, 0.95),
        shampoo_beta: float | None = None,
        eps: float = 1e-8,
        weight_decay: float = 0.01,
        precondition_frequency: int = 10,
        max_precond_dim: int = 10000,
    ) -> None:
        self.params = params
        self.lr = lr
        self.beta1, self.beta2 = betas
        self.shampoo_beta = self.beta2 if shampoo_beta is None else shampoo_beta
        self.eps = eps
        self.weight_decay = weight_decay
        self.frequency = precondition_frequency
        self.t = 0  # updates made (the initialisation call is not counted)
        self.initialized = False
        self.M = [np.zeros_like(p) for p in params]  # first moment, original basis
        self.V = [np.zeros_like(p) for p in params]  # second moment, rotated basis
        self.L: list[np.ndarray | None] = []  # EMA of G G^T
        self.R: list[np.ndarray | None] = []  # EMA of G^T G
        for p in params:
            rows, cols = (p.shape[0], p.shape[1]) if p.ndim == 2 else (0, 0)
            left = p.ndim == 2 and rows <= max_precond_dim
            right = p.ndim == 2 and cols <= max_precond_dim
            self.L.append(np.zeros((rows, rows)) if left else None)
            self.R.append(np.zeros((cols, cols)) if right else None)
        self.QL: list[np.ndarray | None] = [None] * len(params)
        self.QR: list[np.ndarray | None] = [None] * len(params)

    def _update_factors(self, i: int, G: np.ndarray) -> None:
        """Shampoo's preconditioner factors: EMAs of G G^T and G^T G."""
        beta = self.shampoo_beta
        # <paper2code name="update preconditioner factors">
        if self.L[i] is not None:
            self.L[i] = beta * self.L[i] + (1.0 - beta) * G @ G.T
        if self.R[i] is not None:
            self.R[i] = beta * self.R[i] + (1.0 - beta) * G.T @ G
        # </paper2code name="update preconditioner factors">

    def step(self, grads: list[np.ndarray]) -> None:
        """One SOAP call given the gradients of every parameter."""
        # <paper2code name="soap step">
        if not self.initialized:
            # <paper2code name="initialise eigenbases">
            for i, G in enumerate(grads):
                self._update_factors(i, G)
                if self.L[i] is not None:
                    self.QL[i] = eigenbasis(self.L[i])
                if self.R[i] is not None:
                    self.QR[i] = eigenbasis(self.R[i])
            self.initialized = True
            return
            # </paper2code name="initialise eigenbases">
        self.t += 1
        t = self.t
        for i, (W, G) in enumerate(zip(self.params, grads)):
            QL, QR = self.QL[i], self.QR[i]
            # <paper2code name="rotate gradient">
            G_rot = project(G, QL, QR)
            # </paper2code name="rotate gradient">
            # <paper2code name="first moment">
            self.M[i] = self.beta1 * self.M[i] + (1.0 - self.beta1) * G
            # </paper2code name="first moment">
            # <paper2code name="second moment in eigenbasis">
            self.V[i] = self.beta2 * self.V[i] + (1.0 - self.beta2) * G_rot * G_rot
            # </paper2code name="second moment in eigenbasis">
            # <paper2code name="adam in eigenbasis">
            M_rot = project(self.M[i], QL, QR)
            N_rot = (M_rot / (1.0 - self.beta1**t)) / (np.sqrt(self.V[i] / (1.0 - self.beta2**t)) + self.eps)
            # </paper2code name="adam in eigenbasis">
            # <paper2code name="rotate back and update">
            W -= self.lr * project_back(N_rot, QL, QR)
            # </paper2code name="rotate back and update">
            # <paper2code name="decoupled weight decay">
            W -= self.lr * self.weight_decay * W
            # </paper2code name="decoupled weight decay">
            self._update_factors(i, G)
            # <paper2code name="refresh eigenbases">
            if t % self.frequency == 0:
                if QL is not None:
                    self.QL[i], self.V[i] = refresh_eigenbasis(self.L[i], QL, self.V[i], 0)
                if QR is not None:
                    self.QR[i], self.V[i] = refresh_eigenbasis(self.R[i], QR, self.V[i], 1)
            # </paper2code name="refresh eigenbases">
        # </paper2code name="soap step">
