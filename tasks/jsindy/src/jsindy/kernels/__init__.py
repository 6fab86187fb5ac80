from .kernels import (
    GaussianRBFKernel,
    ScalarMaternKernel,
    RationalQuadraticKernel,
    SpectralMixtureKernel,
    LinearKernel,
    PolynomialKernel
)
from .base_kernels import Kernel,softplus_inverse,ConstantKernel
from .fit_kernel import fit_kernel,build_loocv,build_neg_marglike,fit_kernel_partialobs

__all__ = [
    "Kernel",
    "GaussianRBFKernel",
    "ScalarMaternKernel",
    "RationalQuadraticKernel",
    "LinearKernel",
    "PolynomialKernel",
    "SpectralMixtureKernel",
    "fit_kernel",
    "build_loocv",
    "build_neg_marglike",
    "softplus_inverse",
    "fit_kernel_partialobs"
]