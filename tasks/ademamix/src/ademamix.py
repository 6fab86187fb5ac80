"""AdEMAMix (Pagliardini et al., 2024) for numpy arrays."""

from __future__ import annotations

import math

import numpy as np


def alpha_scheduler(t: int, alpha: float, T_alpha: int) -> float:
    """f_α: the mixing coefficient after t steps of a linear warm-up from 0 to α over T_α steps."""
    # <paper2code name="alpha warmup">
    return min(t * alpha / T_alpha, alpha)
    # </paper2code name="alpha warmup">


def beta3_scheduler(t: int, beta3: float, beta_start: float, T_beta3: int) -> float:
    """f_β3: the slow EMA rate after t steps of warm-up from β_start to β3 over T_β3 steps.

    The warm-up is linear in the half-life of the EMA (linear in 1 / ln β), not in β.
    """
    # <paper2code name="beta3 warmup">
    s = t / T_beta3
    log_start, log_end = math.log(beta_start), math.log(beta3)
    value = math.exp(log_start * log_end / ((1.0 - s) * log_end + s * log_start))
    return min(value, beta3)
    # </paper2code name="beta3 warmup">


class AdEMAMix:
    """AdEMAMix over a list of numpy parameter arrays, updated in place.

    Args:
        params: parameter arrays (float), updated in place by :meth:`step`.
        lr: learning rate η.
        betas: (β1, β2, β3): fast EMA, second moment, slow EMA.
        alpha: mixing coefficient α of the slow EMA.
        T_alpha_beta3: warm-up length T for both α and β3 (T_α = T_β3), or None
            for no warm-up (α and β3 used from the first step).
        eps: ε added to the square root of the second moment.
        weight_decay: decoupled weight decay λ.
    """

    def __init__(
        self,
        params: list[np.ndarray],
        lr: float = 1e-3,
        betas: tuple[float, float, float] = (0.9, 0.999, 0.9999),
        alpha: float = 5.0,
        T_alpha_beta3: int | None = None,
        eps: float = 1e-8,
        weight_decay: float = 0.0,
    ) -> None:
        self.params = params
        self.lr = lr
        self.beta1, self.beta2, self.beta3 = betas
        self.alpha = alpha
        self.T_alpha_beta3 = T_alpha_beta3
        self.eps = eps
        self.weight_decay = weight_decay
        self.t = 0  # steps taken
        self.m1 = [np.zeros_like(p) for p in params]  # fast EMA of gradients
        self.m2 = [np.zeros_like(p) for p in params]  # slow EMA of gradients
        self.nu = [np.zeros_like(p) for p in params]  # EMA of squared gradients

    def step(self, grads: list[np.ndarray]) -> None:
        """One AdEMAMix step given the gradients of every parameter."""
        # <paper2code name="ademamix step">
        self.t += 1
        t = self.t
        # <paper2code name="scheduled alpha and beta3">
        if self.T_alpha_beta3 is None:
            alpha, beta3 = self.alpha, self.beta3
        else:
            alpha = alpha_scheduler(t, self.alpha, self.T_alpha_beta3)
            beta3 = beta3_scheduler(t, self.beta3, self.beta1, self.T_alpha_beta3)
        # </paper2code name="scheduled alpha and beta3">
        for i, (theta, g) in enumerate(zip(self.params, grads)):
            # <paper2code name="update moments">
            # <paper2code name="fast ema">
            self.m1[i] = self.beta1 * self.m1[i] + (1.0 - self.beta1) * g
            # </paper2code name="fast ema">
            # <paper2code name="slow ema">
            self.m2[i] = beta3 * self.m2[i] + (1.0 - beta3) * g
            # </paper2code name="slow ema">
            # <paper2code name="second moment">
            self.nu[i] = self.beta2 * self.nu[i] + (1.0 - self.beta2) * g * g
            # </paper2code name="second moment">
            # </paper2code name="update moments">
            # <paper2code name="parameter update">
            # <paper2code name="bias correction">
            m1_hat = self.m1[i] / (1.0 - self.beta1**t)
            nu_hat = self.nu[i] / (1.0 - self.beta2**t)
            # </paper2code name="bias correction">
            # <paper2code name="mix fast and slow ema">
            update = (m1_hat + alpha * self.m2[i]) / (np.sqrt(nu_hat) + self.eps)
            # </paper2code name="mix fast and slow ema">
            # <paper2code name="decoupled weight decay">
            update = update + self.weight_decay * theta
            # </paper2code name="decoupled weight decay">
            theta -= self.lr * update
            # </paper2code name="parameter update">
        # </paper2code name="ademamix step">
