# Copyright (c) 2026 Antonin Sulc
# Licensed under the MIT License. See LICENSE file for details.

"""
Solver classes for FastLSQ.

FastLSQSolver  -- Random Fourier Features with sin activation.  Exposes
                  a ``SinusoidalBasis`` via the ``.basis`` property.
PIELMSolver    -- Physics-Informed Extreme Learning Machine with tanh
                  activation (baseline).  Exposes a ``FeatureBasis``
                  adapter via the same ``.basis`` property.
"""

import torch
import numpy as np

from fastlsq.device import get_device
from fastlsq.basis import SinusoidalBasis


# ======================================================================
# FastLSQ Solver
# ======================================================================

class FastLSQSolver:
    """Random Fourier Features with sin activation.

    Parameters
    ----------
    input_dim : int
        Spatial / spatio-temporal dimensionality of the input.
    normalize : bool, optional
        If True, all features are divided by sqrt(N).
    """

    def __init__(self, input_dim, normalize=False):
        self.input_dim = input_dim
        self.normalize = normalize
        self.W_list: list[torch.Tensor] = []
        self.b_list: list[torch.Tensor] = []
        self.beta: torch.Tensor | None = None
        self._n_features = 0
        self._basis: SinusoidalBasis | None = None

    def add_block(self, hidden_size=500, scale=1.0):
        """Append a block of random Fourier features."""
        W = torch.randn(self.input_dim, hidden_size, device=get_device())

        if isinstance(scale, (list, np.ndarray)):
            s = torch.tensor(scale, device=get_device(), dtype=W.dtype).unsqueeze(1)
            W = W * s
        else:
            W = W * scale

        b = torch.rand(1, hidden_size, device=get_device()) * 2 * np.pi
        self.W_list.append(W)
        self.b_list.append(b)
        self._n_features += hidden_size
        self._basis = None

    @property
    def n_features(self):
        return self._n_features

    @property
    def basis(self) -> SinusoidalBasis:
        """The underlying analytical derivative engine."""
        if self._basis is None:
            W = torch.cat(self.W_list, dim=1)
            b = torch.cat(self.b_list, dim=1)
            self._basis = SinusoidalBasis(W, b, normalize=self.normalize)
        return self._basis

    def predict(self, x):
        """Evaluate u_N(x).

        Returns shape ``(M, k)`` where ``k`` is the number of output
        components stored in ``self.beta`` (``k=1`` for scalar problems).
        """
        return self.basis.evaluate(x) @ self.beta

    def predict_with_grad(self, x):
        """Evaluate u_N(x) and its gradient.

        Returns
        -------
        u : Tensor ``(M, k)``
        grad_u : Tensor ``(M, d)`` if ``k == 1`` else ``(M, d, k)``
        """
        cache = self.basis.cache(x)
        u = self.basis.evaluate(x, cache=cache) @ self.beta
        grad_u = torch.einsum(
            "idh,hk->idk", self.basis.gradient(x, cache=cache), self.beta
        )
        if grad_u.shape[-1] == 1:
            grad_u = grad_u.squeeze(-1)
        return u, grad_u

    def predict_with_laplacian(self, x):
        """Evaluate u_N(x), gradient, and Laplacian.

        Same shape conventions as ``predict_with_grad``; the Laplacian has
        shape ``(M, k)``.
        """
        cache = self.basis.cache(x)
        u = self.basis.evaluate(x, cache=cache) @ self.beta
        grad_u = torch.einsum(
            "idh,hk->idk", self.basis.gradient(x, cache=cache), self.beta
        )
        if grad_u.shape[-1] == 1:
            grad_u = grad_u.squeeze(-1)
        lap_u = self.basis.laplacian(x, cache=cache) @ self.beta
        return u, grad_u, lap_u

    evaluate = predict
    evaluate_with_grad = predict_with_grad
    evaluate_with_laplacian = predict_with_laplacian
