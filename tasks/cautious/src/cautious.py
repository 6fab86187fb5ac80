"""Cautious optimisers (Liang et al., 2024): C-AdamW and C-Lion for numpy arrays."""

from __future__ import annotations

import numpy as np


def cautious_mask(u: np.ndarray, g: np.ndarray) -> np.ndarray:
    """The rescaled cautious mask for an update direction u and the current gradient g.

    Returns φ · d / (nnz(φ) + 1), where φ = 1(u ⊙ g > 0) element-wise and d = u.size.
    """
    # <paper2code name="cautious mask">
    # <paper2code name="sign agreement mask">
    phi = (u * g > 0).astype(u.dtype)
    # </paper2code name="sign agreement mask">
    # <paper2code name="mask rescaling">
    scale = phi.size / (np.count_nonzero(phi) + 1)
    return phi * scale
    # </paper2code name="mask rescaling">
    # </paper2code name="cautious mask">


class CautiousAdamW:
    """C-AdamW over a list of numpy parameter arrays, updated in place.

    Args:
        params: parameter arrays (float), updated in place by :meth:`step`.
        lr: step size ε_t (constant here).
        betas: (β1, β2).
        eps: e, added to the square root of the second moment.
        weight_decay: decoupled weight decay γ.
        cautious: apply the cautious mask (False gives plain AdamW).
    """

    def __init__(
        self,
        params: list[np.ndarray],
        lr: float = 1e-3,
        betas: tuple[float, float] = (0.9, 0.999),
        eps: float = 1e-8,
        weight_decay: float = 0.0,
        cautious: bool = True,
    ) -> None:
        self.params = params
        self.lr = lr
        self.beta1, self.beta2 = betas
        self.eps = eps
        self.weight_decay = weight_decay
        self.cautious = cautious
        self.t = 0  # steps taken
        self.m = [np.zeros_like(p) for p in params]
        self.v = [np.zeros_like(p) for p in params]

    def step(self, grads: list[np.ndarray]) -> None:
        """One C-AdamW step given the gradients of every parameter."""
        # <paper2code name="c-adamw step">
        self.t += 1
        for i, (w, g) in enumerate(zip(self.params, grads)):
            # <paper2code name="adam moments">
            self.m[i] = self.beta1 * self.m[i] + (1.0 - self.beta1) * g
            self.v[i] = self.beta2 * self.v[i] + (1.0 - self.beta2) * g * g
            # </paper2code name="adam moments">
            # <paper2code name="adam direction">
            m_hat = self.m[i] / (1.0 - self.beta1**self.t)
            v_hat = self.v[i] / (1.0 - self.beta2**self.t)
            u = m_hat / (np.sqrt(v_hat) + self.eps)
            # </paper2code name="adam direction">
            # <paper2code name="cautious adamw update">
            if self.cautious:
                u = u * cautious_mask(u, g)
            w -= self.lr * u
            # </paper2code name="cautious adamw update">
            # <paper2code name="adamw weight decay">
            w -= self.lr * self.weight_decay * w
            # </paper2code name="adamw weight decay">
        # </paper2code name="c-adamw step">


class CautiousLion:
    """C-Lion over a list of numpy parameter arrays, updated in place.

    Args:
        params: parameter arrays (float), updated in place by :meth:`step`.
        lr: step size ε_t (constant here).
        betas: (β1, β2): interpolation for the update sign, momentum decay.
        weight_decay: decoupled weight decay λ.
        cautious: apply the cautious mask (False gives plain Lion).
    """

    def __init__(
        self,
        params: list[np.ndarray],
        lr: float = 1e-4,
        betas: tuple[float, float] = (0.9, 0.99),
        weight_decay: float = 0.0,
        cautious: bool = True,
    ) -> None:
        self.params = params
        self.lr = lr
        self.beta1, self.beta2 = betas
        self.weight_decay = weight_decay
        self.cautious = cautious
        self.m = [np.zeros_like(p) for p in params]

    def step(self, grads: list[np.ndarray]) -> None:
        """One C-Lion step given the gradients of every parameter."""
        # <paper2code name="c-lion step">
        for i, (w, g) in enumerate(zip(self.params, grads)):
            # <paper2code name="lion weight decay">
            w *= 1.0 - self.lr * self.weight_decay
            # </paper2code name="lion weight decay">
            # <paper2code name="lion direction">
            u = np.sign(self.beta1 * self.m[i] + (1.0 - self.beta1) * g)
            # </paper2code name="lion direction">
            # <paper2code name="cautious lion update">
            if self.cautious:
                u = u * cautious_mask(u, g)
            w -= self.lr * u
            # </paper2code name="cautious lion update">
            # <paper2code name="lion momentum">
            self.m[i] = self.beta2 * self.m[i] + (1.0 - self.beta2) * g
            # </paper2code name="lion momentum">
        # </paper2code name="c-lion step">
