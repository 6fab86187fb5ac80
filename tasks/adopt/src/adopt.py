"""ADOPT (Taniguchi et al., 2024) for numpy arrays."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np


def default_clip(step: int) -> float:
    """The clipping bound c_t = t^(1/4) of the paper's implementation."""
    return step**0.25


class ADOPT:
    """ADOPT over a list of numpy parameter arrays, updated in place.

    Args:
        params: parameter arrays (float), updated in place by :meth:`step`.
        lr: step size α.
        betas: (β1, β2).
        eps: floor ε on the square root of the second moment.
        weight_decay: λ.
        decoupled: decoupled (AdamW-style) weight decay instead of L2.
        clip: c_t as a function of the update count t, or None for no clipping.
    """

    def __init__(
        self,
        params: list[np.ndarray],
        lr: float = 1e-3,
        betas: tuple[float, float] = (0.9, 0.9999),
        eps: float = 1e-6,
        weight_decay: float = 0.0,
        decoupled: bool = False,
        clip: Callable[[int], float] | None = default_clip,
    ) -> None:
        self.params = params
        self.lr = lr
        self.beta1, self.beta2 = betas
        self.eps = eps
        self.weight_decay = weight_decay
        self.decoupled = decoupled
        self.clip = clip
        self.t = 0  # updates made after the initialisation step
        self.initialized = False
        self.m = [np.zeros_like(p) for p in params]
        self.v = [np.zeros_like(p) for p in params]

    def step(self, grads: list[np.ndarray]) -> None:
        """One ADOPT step given the gradients of every parameter."""
        # <paper2code name="adopt update">
        for i, (param, grad) in enumerate(zip(self.params, grads)):
            # <paper2code name="weight decay">
            if self.weight_decay != 0.0:
                if self.decoupled:
                    param *= 1.0 - self.lr * self.weight_decay
                else:
                    grad = grad + self.weight_decay * param
            # </paper2code name="weight decay">
            if not self.initialized:
                # <paper2code name="initialize second moment">
                self.v[i] = grad * grad
                continue
                # </paper2code name="initialize second moment">
            t = self.t + 1
            # <paper2code name="normalize gradient">
            normed = grad / np.maximum(np.sqrt(self.v[i]), self.eps)
            # </paper2code name="normalize gradient">
            # <paper2code name="clip normalized gradient">
            if self.clip is not None:
                bound = self.clip(t)
                normed = np.clip(normed, -bound, bound)
            # </paper2code name="clip normalized gradient">
            # <paper2code name="momentum update">
            self.m[i] = self.beta1 * self.m[i] + (1.0 - self.beta1) * normed
            # </paper2code name="momentum update">
            # <paper2code name="parameter update">
            param -= self.lr * self.m[i]
            # </paper2code name="parameter update">
            # <paper2code name="second moment update">
            self.v[i] = self.beta2 * self.v[i] + (1.0 - self.beta2) * grad * grad
            # </paper2code name="second moment update">
        if self.initialized:
            self.t += 1
        self.initialized = True
        # </paper2code name="adopt update">
