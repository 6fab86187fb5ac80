# Copyright (c) 2026 Antonin Sulc
# Licensed under the MIT License. See LICENSE file for details.

"""
Sinusoidal basis and symbolic differential operators -- the foundation of FastLSQ.

The core insight: for sinusoidal features φ_j(x) = sin(W_j^T x + b_j),
any derivative of any order admits an exact closed-form expression:

    D^α φ_j(x) = (∏_k W_{jk}^{α_k}) · Φ_{|α| mod 4}(W_j^T x + b_j)

where Φ_0 = sin, Φ_1 = cos, Φ_2 = −sin, Φ_3 = −cos.

This module makes that identity the central, first-class abstraction:

* ``SinusoidalBasis`` -- evaluates arbitrary-order derivatives in O(1).
* ``BasisCache``      -- pre-computes sin(Z)/cos(Z) once, reuses across
                         multiple derivative evaluations at the same points.
* ``DiffOperator``    -- symbolic representation of linear differential
                         operators that compose via +, −, scalar *.
                         Aliased as ``Op`` for concise usage.

The very same identity runs *backwards*: integration is differentiation of
*negative* order.  Since ∫ sin(w x + b) dx = −(1/w) cos(w x + b), an
antiderivative is just a term with a negative multi-index entry and a
reciprocal prefactor 1/w.  So the calculus is closed in *both* directions:

* ``DiffOperator.antiderivative`` -- indefinite ∫ as a negative-order partial.
* ``IntegralOperator``            -- definite / running (Volterra) integrals
                                     with limits, evaluated in closed form.
* ``IntegroDifferentialOperator`` -- the common roof under which differential
                                     and integral terms compose into one
                                     linear-in-coefficients design matrix.

That turns "exact closed-form *derivatives* → linear least squares" into
"exact closed-form *calculus*": integro-differential and integral equations
are assembled and solved in exactly the same one-shot LSQ.

Example
-------
>>> from fastlsq.basis import SinusoidalBasis, Op
>>> basis = SinusoidalBasis.random(input_dim=2, n_features=1000, sigma=3.0)
>>> x = torch.rand(5000, 2)
>>>
>>> # Arbitrary mixed partial via multi-index
>>> d3_dxdy2 = basis.derivative(x, alpha=(1, 2))
>>>
>>> # Compose operators symbolically
>>> k = 10.0
>>> helmholtz = Op.laplacian(d=2) + k**2 * Op.identity(d=2)
>>> A_pde = helmholtz.apply(basis, x)          # (5000, 1000)
>>>
>>> # Learnable coefficients: plug nn.Parameter for AdamW optimisation
>>> k = torch.nn.Parameter(torch.tensor(10.0))
>>> helmholtz = Op.laplacian(d=2) + k**2 * Op.identity(d=2)
>>> A_pde = helmholtz.apply(basis, x)         # differentiable w.r.t. k
>>>
>>> # Or use fast-path methods directly
>>> A_pde_fast = basis.laplacian(x) + k**2 * basis.evaluate(x)  # same result
"""

from __future__ import annotations

import torch
import numpy as np
from typing import Optional, Sequence, Union

from fastlsq.device import get_device

# Type for operator term coefficients: scalars or learnable tensors (nn.Parameter)
CoeffT = Union[float, int, torch.Tensor]


# ======================================================================
# BasisCache: avoid redundant sin/cos computation
# ======================================================================

# <paper2code name="BasisCache class (cached sin(Z), cos(Z) and the phase cycle phase())">
class BasisCache:
    """Pre-computed quantities for a fixed (basis, x) pair.

    Computes Z = x @ W + b once and lazily evaluates sin(Z) and cos(Z)
    on first access, then caches them for reuse across multiple
    derivative evaluations.
    """

    __slots__ = ("Z", "_sin", "_cos")

    def __init__(self, Z: torch.Tensor):
        self.Z = Z
        self._sin: Optional[torch.Tensor] = None
        self._cos: Optional[torch.Tensor] = None

    @property
    def sin_Z(self) -> torch.Tensor:
        if self._sin is None:
            self._sin = torch.sin(self.Z)
        return self._sin

    @property
    def cos_Z(self) -> torch.Tensor:
        if self._cos is None:
            self._cos = torch.cos(self.Z)
        return self._cos

    def phase(self, order: int) -> torch.Tensor:
        """Evaluate Φ_{order mod 4}(Z)."""
        r = order % 4
        if r == 0:
            return self.sin_Z
        elif r == 1:
            return self.cos_Z
        elif r == 2:
            return -self.sin_Z
        else:
            return -self.cos_Z
# </paper2code name="BasisCache class (cached sin(Z), cos(Z) and the phase cycle phase())">


# ======================================================================
# SinusoidalBasis: the core analytical derivative engine
# ======================================================================

class SinusoidalBasis:
    """Analytical derivative engine for sinusoidal random Fourier features.

    Given frozen weights W ∈ R^{d×N} and biases b ∈ R^{1×N}, provides O(1)
    evaluation of any derivative D^α sin(W^T x + b) via the cyclic identity:

        D^α φ_j(x) = (∏_k W_{jk}^{α_k}) · Φ_{|α| mod 4}(W_j^T x + b_j)

    Parameters
    ----------
    W : Tensor, shape (d, N)
        Feature weight matrix (columns are frequency vectors).
    b : Tensor, shape (1, N)
        Bias / phase vector.
    normalize : bool
        If True, all outputs are scaled by 1/√N.
    dc_eps : float
        DC guard for *integration* (negative-order derivatives).  A feature whose
        frequency along an integrated axis satisfies ``|W_{jk}| <= dc_eps`` has no
        sinusoidal antiderivative (its primitive is a ramp that leaves the basis),
        so its column is zeroed instead of dividing by ~0.  Only affects negative
        orders; ordinary derivatives are untouched.
    """

    def __init__(
        self,
        W: torch.Tensor,
        b: torch.Tensor,
        normalize: bool = True,
        dc_eps: float = 1e-8,
    ):
        self.W = W
        self.b = b
        self._inv_norm = 1.0 / np.sqrt(W.shape[1]) if normalize else 1.0
        self._dc_eps = dc_eps

    @property
    def input_dim(self) -> int:
        return self.W.shape[0]

    @property
    def n_features(self) -> int:
        return self.W.shape[1]

    # ------------------------------------------------------------------
    # Constructors
    # ------------------------------------------------------------------

    @classmethod
    def random(
        cls,
        input_dim: int,
        n_features: int,
        sigma: float = 1.0,
        normalize: bool = True,
        dc_eps: float = 1e-8,
    ) -> SinusoidalBasis:
        """Create a basis with isotropic Gaussian weights."""
        W = torch.randn(input_dim, n_features, device=get_device()) * sigma
        b = torch.rand(1, n_features, device=get_device()) * 2 * np.pi
        return cls(W, b, normalize=normalize, dc_eps=dc_eps)

    @classmethod
    def random_anisotropic(
        cls,
        input_dim: int,
        n_features: int,
        sigma: Union[list, np.ndarray, torch.Tensor],
        normalize: bool = True,
        dc_eps: float = 1e-8,
    ) -> SinusoidalBasis:
        """Create a basis with per-dimension bandwidths."""
        W = torch.randn(input_dim, n_features, device=get_device())
        s = torch.as_tensor(sigma, device=get_device(), dtype=W.dtype).reshape(-1, 1)
        W = W * s
        b = torch.rand(1, n_features, device=get_device()) * 2 * np.pi
        return cls(W, b, normalize=normalize, dc_eps=dc_eps)

    @classmethod
    def random_covariance(
        cls,
        input_dim: int,
        n_features: int,
        Sigma: Optional[Union[list, np.ndarray, torch.Tensor]] = None,
        L: Optional[Union[list, np.ndarray, torch.Tensor]] = None,
        normalize: bool = True,
        dc_eps: float = 1e-8,
    ) -> SinusoidalBasis:
        """Create a basis with full-covariance Gaussian frequencies.

        Frequencies are drawn ``W[:, j] ~ N(0, Sigma)`` via ``W = L @ W_hat`` with
        ``W_hat ~ N(0, I_d)`` and ``Sigma = L L^T``.  Provide **exactly one** of
        ``Sigma`` (the ``d x d`` covariance) or its lower-triangular Cholesky factor
        ``L``.  This is the fixed full-``Sigma`` analogue of :meth:`random`
        (isotropic) and :meth:`random_anisotropic` (axis-aligned), and uses the same
        ``W = L @ W_hat`` reparameterisation as
        :class:`~fastlsq.learnable.LearnableFastLSQ` -- so a swept covariance no
        longer needs a hand-rolled ``chol(Sigma) @ randn``.
        """
        if (Sigma is None) == (L is None):
            raise ValueError(
                "random_covariance: provide exactly one of Sigma or L."
            )
        dev = get_device()
        dt = torch.get_default_dtype()
        if L is None:
            Sigma_t = torch.as_tensor(Sigma, device=dev, dtype=dt)
            L_t = torch.linalg.cholesky(Sigma_t)
        else:
            L_t = torch.as_tensor(L, device=dev, dtype=dt)
        W_hat = torch.randn(input_dim, n_features, device=dev, dtype=L_t.dtype)
        W = L_t @ W_hat
        b = torch.rand(1, n_features, device=dev, dtype=L_t.dtype) * 2 * np.pi
        return cls(W, b, normalize=normalize, dc_eps=dc_eps)

    # ------------------------------------------------------------------
    # Caching
    # ------------------------------------------------------------------

    def cache(self, x: torch.Tensor) -> BasisCache:
        """Create a cache for the given collocation points."""
        # Accept inputs in any dtype/device (e.g. float32 from user code) and
        # promote to the basis's own dtype/device so ``x @ self.W`` never trips
        # a float32-vs-float64 mismatch.
        if x.dtype != self.W.dtype or x.device != self.W.device:
            x = x.to(dtype=self.W.dtype, device=self.W.device)
        return BasisCache(x @ self.W + self.b)

    # ------------------------------------------------------------------
    # Core: arbitrary-order derivative via cyclic identity
    # ------------------------------------------------------------------

    def derivative(
        self,
        x: torch.Tensor,
        alpha: tuple[int, ...],
        cache: Optional[BasisCache] = None,
    ) -> torch.Tensor:
        """Evaluate D^α φ_j(x) for all features j.

        Parameters
        ----------
        x : Tensor, shape (M, d)
        alpha : tuple of d integers
            Multi-index specifying the derivative order per dimension.
            E.g. (2, 0) = ∂²/∂x₀², (1, 1) = ∂²/∂x₀∂x₁.

            *Negative* entries denote (indefinite) **integration**: the same cyclic
            identity run backwards, with a reciprocal prefactor.  E.g. (-1, 0) is the
            antiderivative ∫·dx₀ = −cos(Z)/W₀, and mixed signs like (-1, 1) give
            ∂/∂x₁ ∫·dx₀ = (W₁/W₀) sin(Z).  See :meth:`DiffOperator.antiderivative`.
            The arbitrary constant of integration leaves the sinusoidal family and is
            *not* represented here; features with ``|W_{jk}| <= dc_eps`` along an
            integrated axis are zeroed (see ``dc_eps``).
        cache : BasisCache, optional
            Reuse pre-computed sin/cos from a previous call.

        Returns
        -------
        Tensor, shape (M, N)
        """
        if cache is None:
            cache = self.cache(x)

        # <paper2code name="cyclic derivative">
        order = sum(alpha)
        base = cache.phase(order)  # (M, N); phase() handles order % 4 for negative orders

        # Monomial prefactor: ∏_k W_k^{α_k}.  Positive α_k multiply by W_k (derivative);
        # negative α_k divide (integration), DC-guarded against ~0 frequencies.
        prefactor = torch.ones(
            1, self.n_features, device=self.W.device, dtype=self.W.dtype
        )
        for k, a_k in enumerate(alpha):
            if a_k == 0:
                continue
            Wk = self.W[k : k + 1, :]
            if a_k > 0:
                prefactor = prefactor * (Wk ** a_k)
            else:
                safe = Wk.abs() > self._dc_eps
                Wk_safe = torch.where(safe, Wk, torch.ones_like(Wk))
                prefactor = prefactor * torch.where(
                    safe, Wk_safe ** a_k, torch.zeros_like(Wk)
                )

        return (prefactor * base) * self._inv_norm
        # </paper2code name="cyclic derivative">

    # ------------------------------------------------------------------
    # Convenience: 0th order (basis values)
    # ------------------------------------------------------------------

    def evaluate(
        self, x: torch.Tensor, cache: Optional[BasisCache] = None
    ) -> torch.Tensor:
        """φ_j(x) = sin(W_j^T x + b_j), shape (M, N)."""
        if cache is None:
            cache = self.cache(x)
        return cache.sin_Z * self._inv_norm

    # ------------------------------------------------------------------
    # Convenience: first derivatives (gradient)
    # ------------------------------------------------------------------

    def gradient(
        self, x: torch.Tensor, cache: Optional[BasisCache] = None
    ) -> torch.Tensor:
        """∇φ_j(x), shape (M, d, N).

        Component k is ∂φ_j/∂x_k = W_{jk} cos(Z_j).
        """
        if cache is None:
            cache = self.cache(x)
        return (cache.cos_Z.unsqueeze(1) * self.W.unsqueeze(0)) * self._inv_norm

    # ------------------------------------------------------------------
    # Convenience: diagonal Hessian
    # ------------------------------------------------------------------

    def hessian_diag(
        self, x: torch.Tensor, cache: Optional[BasisCache] = None
    ) -> torch.Tensor:
        """∂²φ_j/∂x_k², shape (M, d, N).

        Component k is −W_{jk}² sin(Z_j).
        """
        if cache is None:
            cache = self.cache(x)
        return (
            -cache.sin_Z.unsqueeze(1) * (self.W ** 2).unsqueeze(0)
        ) * self._inv_norm

    # ------------------------------------------------------------------
    # Fast-path PDE operators (exploit eigenfunction structure)
    # ------------------------------------------------------------------

    def laplacian(
        self,
        x: torch.Tensor,
        dims: Optional[Sequence[int]] = None,
        cache: Optional[BasisCache] = None,
    ) -> torch.Tensor:
        """Δφ_j(x) = −‖W_j‖² sin(Z_j), shape (M, N).

        Parameters
        ----------
        dims : sequence of int, optional
            Restrict the Laplacian to these dimensions (e.g. spatial only).
            Default: all dimensions.
        """
        if cache is None:
            cache = self.cache(x)
        if dims is None:
            w_sq_sum = torch.sum(self.W ** 2, dim=0, keepdim=True)
        else:
            w_sq_sum = torch.sum(self.W[dims, :] ** 2, dim=0, keepdim=True)
        return (-w_sq_sum * cache.sin_Z) * self._inv_norm

    def biharmonic(
        self,
        x: torch.Tensor,
        dims: Optional[Sequence[int]] = None,
        cache: Optional[BasisCache] = None,
    ) -> torch.Tensor:
        """Δ²φ_j(x) = ‖W_j‖⁴ sin(Z_j), shape (M, N)."""
        if cache is None:
            cache = self.cache(x)
        if dims is None:
            w_sq_sum = torch.sum(self.W ** 2, dim=0, keepdim=True)
        else:
            w_sq_sum = torch.sum(self.W[dims, :] ** 2, dim=0, keepdim=True)
        return (w_sq_sum ** 2 * cache.sin_Z) * self._inv_norm

    def advection(
        self,
        x: torch.Tensor,
        v: torch.Tensor,
        cache: Optional[BasisCache] = None,
    ) -> torch.Tensor:
        """(v · ∇)φ_j(x) = (v · W_j) cos(Z_j), shape (M, N).

        v can be a constant vector (d,) or spatially varying (M, d).
        """
        if cache is None:
            cache = self.cache(x)
        if v.dim() == 1:
            vdotW = (v.unsqueeze(1) * self.W).sum(dim=0, keepdim=True)
        else:
            vdotW = torch.einsum("md,dn->mn", v, self.W)
        return (vdotW * cache.cos_Z) * self._inv_norm

    # ------------------------------------------------------------------
    # General operator evaluation from symbolic specification
    # ------------------------------------------------------------------

    def operator(
        self,
        x: torch.Tensor,
        terms: list[tuple[CoeffT, Union[tuple, dict]]],
        cache: Optional[BasisCache] = None,
    ) -> torch.Tensor:
        """Evaluate a linear differential operator L = Σ_i c_i D^{α_i}.

        Parameters
        ----------
        x : Tensor (M, d)
        terms : list of (coeff, alpha)
            coeff: scalar coefficient (float) or learnable tensor (e.g. nn.Parameter).
                   Tensors enable gradients to flow through operator coefficients.
            alpha: multi-index as a tuple of length d, or a dict
                   {dim: order} (unspecified dims default to 0).
        cache : BasisCache, optional

        Returns
        -------
        Tensor (M, N)

        Example
        -------
        Helmholtz in 2D: Δu + k²u

        >>> basis.operator(x, [
        ...     (1.0, (2, 0)),   # u_xx
        ...     (1.0, (0, 2)),   # u_yy
        ...     (k**2, (0, 0)),  # k² u (k can be nn.Parameter)
        ... ])
        """
        if cache is None:
            cache = self.cache(x)

        d = self.input_dim
        result = torch.zeros(
            x.shape[0], self.n_features, device=self.W.device, dtype=self.W.dtype
        )
        for coeff, alpha in terms:
            if isinstance(alpha, dict):
                alpha_list = [0] * d
                for dim, order in alpha.items():
                    alpha_list[dim] = order
                alpha = tuple(alpha_list)
            D = self.derivative(x, alpha, cache=cache)
            if callable(coeff) and not isinstance(coeff, torch.Tensor):
                # Variable-coefficient term c(x) * D^alpha phi.
                c_vals = coeff(x)
                if c_vals.dim() == 1:
                    c_vals = c_vals.unsqueeze(-1)
                result = result + c_vals * D
            else:
                result = result + coeff * D
        return result
