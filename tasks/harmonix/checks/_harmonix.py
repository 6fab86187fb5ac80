"""Independent values for the harmonix checks (numpy and scipy only; never the code under
test): the inputs of the cases regenerated from RCB_SEED, the real spherical harmonics
of starry/jaxoplanet, Zernike polynomials, and a numerical Fourier transform over the
unit disk.

Conventions, fixed by the paper's definitions and the reference code:

- Y_lm(x, y, z) = A(l, |m|) P_l^|m|(z) cos(m phi) for m >= 0 and sin(|m| phi) for m < 0,
  phi = atan2(y, x), P_l^m with the Condon-Shortley phase (scipy's lpmv), z pointing at
  the observer; on the visible disk z = sqrt(1 - x^2 - y^2). The hemispheric harmonics
  are the terms with l + m even (polynomials in x, y), the complementary ones l + m odd.
- Zernike terms (OSA/ANSI index j -> (n, m)): unnormalized radial polynomial R_n^|m|(r)
  times the same cos / sin angular factor.
- Fourier transform: F(rho, phi) = integral over the unit disk of f(x, y)
  exp(+i rho (x cos phi + y sin phi)) dx dy; a visibility is F / F(0).
- A map seen at inclination inc, obliquity obl and rotational phase theta shows at the
  sky point p the map's value at M^T p, M = Rz(obl) Rx(inc - pi/2) Ry(-theta).
"""

import os
from math import factorial

import numpy as np
from scipy.special import factorial as sfactorial
from scipy.special import lpmv

SEED = int(os.environ.get("RCB_SEED", "0"))
MAS2RAD = np.pi / 180.0 / 3600.0 / 1000.0
RADIUS = 1.3
YDEG = 2


# ---- the cases' inputs, regenerated (cases/cases_harmonix.py draws them the same way) ----


def polar_grid(offset, n=24):
    rng = np.random.default_rng(SEED + offset)
    rho = rng.uniform(0.3, 9.0, n)
    phi = rng.uniform(-np.pi, np.pi, n)
    return rho, phi


def seeded_map(offset):
    rng = np.random.default_rng(SEED + offset)
    y = np.concatenate([[1.0], rng.uniform(-0.25, 0.25, (YDEG + 1) ** 2 - 1)])
    u = (rng.uniform(0.1, 0.5), rng.uniform(0.0, 0.2))
    return y, u


def rotated_view():
    rng = np.random.default_rng(SEED + 53)
    return rng.uniform(0.3, 1.3), rng.uniform(-0.8, 0.8), rng.uniform(0.05, 0.45)


def hsh_vectors():
    rng = np.random.default_rng(SEED + 11)
    return rng.standard_normal((3, jmax(3) + 1))


# ---- bases ----


def jmax(l_max):
    return (l_max**2 + 3 * l_max) // 2


def j_to_nm(j):
    n = int(np.ceil((-3 + np.sqrt(9 + 8 * j)) / 2))
    return n, int(2 * j - n * (n + 2))


def norm_A(l, m):
    return np.sqrt((2 - (m == 0)) * (2 * l + 1) * sfactorial(l - m) / (4 * np.pi * sfactorial(l + m)))


def angular(m, phi):
    return np.cos(m * phi) if m >= 0 else np.sin(-m * phi)


def ylm(l, m, x, y, z):
    """starry's real spherical harmonic Y_lm at points (x, y, z) of the unit sphere."""
    return norm_A(l, abs(m)) * lpmv(abs(m), l, np.clip(z, -1.0, 1.0)) * angular(m, np.arctan2(y, x))


def zernike(n, m, r, phi):
    mm = abs(m)
    radial = sum((-1) ** s * factorial(n - s)
                 / (factorial(s) * factorial((n + mm) // 2 - s) * factorial((n - mm) // 2 - s))
                 * r ** (n - 2 * s) for s in range((n - mm) // 2 + 1))
    return radial * angular(m, phi)


# ---- the unit disk: quadrature (r = sin t, Gauss-Legendre in t, uniform in angle) ----


def disk_quadrature(nt=80, nphi=160):
    t, w = np.polynomial.legendre.leggauss(nt)
    t = (t + 1) * np.pi / 4
    w = w * np.pi / 4
    r = np.sin(t)
    ang = np.arange(nphi) * 2 * np.pi / nphi
    R, PH = np.meshgrid(r, ang, indexing="ij")
    W = (np.cos(t) * w * r)[:, None] * np.full_like(PH, 2 * np.pi / nphi)
    return R * np.cos(PH), R * np.sin(PH), W


X, Y, W = disk_quadrature()
Z = np.sqrt(np.clip(1 - X**2 - Y**2, 0.0, None))


def fourier(f, rho, phi):
    """Numerical Fourier transform (exp(+i k.x)) of f sampled at the quadrature points."""
    kx, ky = rho * np.cos(phi), rho * np.sin(phi)
    return np.exp(1j * (np.outer(kx, X.ravel()) + np.outer(ky, Y.ravel()))) @ (W * f).ravel()


def Rx(a):
    c, s = np.cos(a), np.sin(a)
    return np.array([[1, 0, 0], [0, c, -s], [0, s, c]])


def Ry(a):
    c, s = np.cos(a), np.sin(a)
    return np.array([[c, 0, s], [0, 1, 0], [-s, 0, c]])


def Rz(a):
    c, s = np.cos(a), np.sin(a)
    return np.array([[c, -s, 0], [s, c, 0], [0, 0, 1]])


def sky_intensity(y, u, inc=np.pi / 2, obl=0.0, theta=0.0):
    """The limb-darkened map on the visible disk, seen at (inc, obl, theta)."""
    M = Rz(obl) @ Rx(-(np.pi / 2 - inc)) @ Ry(-theta)
    P = M.T @ np.stack([X.ravel(), Y.ravel(), Z.ravel()])
    xm, ym, zm = (q.reshape(X.shape) for q in P)
    intensity = 0.0
    k = 0
    for l in range(YDEG + 1):
        for m in range(-l, l + 1):
            intensity = intensity + y[k] * ylm(l, m, xm, ym, zm)
            k += 1
    return intensity * (1 - u[0] * (1 - Z) - u[1] * (1 - Z) ** 2)


def visibility(intensity, rho, phi):
    return fourier(intensity, rho, phi) / np.sum(W * intensity)
