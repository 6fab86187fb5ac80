"""Cases for harmonix (arXiv 2509.25433): they run WITH the authors' code, in the run
sandbox, and return plain data; the checks (another sandbox, without this code) decide.

- hsh_polynomials: the hemispheric-harmonic to polynomial matrix (l_max = 3).
- zernike_coefficients: seeded hemispheric-harmonic vectors in the Zernike basis.
- basis_transforms: the Fourier transforms of every Zernike term (n <= 4) and of every
  complementary hemispheric harmonic (l <= 3) on a seeded grid of (rho, phi), with the
  Bessel functions computed here by scipy.
- uniform_disk, visibility_equator_on, visibility_rotated: the complex visibility of
  Harmonix.model for a uniform disk, for a seeded degree-2 map with quadratic limb
  darkening seen equator-on, and for the same map inclined, tilted and rotated.
"""

import os

import numpy as np
import jax

jax.config.update("jax_enable_x64", True)
jax.config.update("jax_disable_most_optimizations", True)  # compile fast: the cases are tiny

import equinox as eqx  # noqa: E402
import jax.numpy as jnp  # noqa: E402
from scipy.special import jv, spherical_jn  # noqa: E402
from jaxoplanet.starry import Surface, Ylm  # noqa: E402

from harmonix.harmonix import Harmonix  # noqa: E402
from harmonix.solution import (  # noqa: E402
    A_hsh_to_p, CHSH_FT_jax, j_to_nm, jmax, transform_to_zernike, zernike_FT_jax)

# rcb validate runs the reference under RCB_SEED 0..9; a model is graded under 0.
SEED = int(os.environ.get("RCB_SEED", "0"))

MAS2RAD = np.pi / 180.0 / 3600.0 / 1000.0
RADIUS = 1.3  # mas
YDEG, UDEG = 2, 2


def polar_grid(offset, n=24):
    """Seeded (rho, phi) with rho in [0.3, 9] (jax's bessel_jn loses accuracy below ~0.1)."""
    rng = np.random.default_rng(SEED + offset)
    rho = rng.uniform(0.3, 9.0, n)
    phi = rng.uniform(-np.pi, np.pi, n)
    return rho, phi


def baselines(offset, n=20):
    """u, v (in wavelengths) whose rho = 2 pi |(u, v)| RADIUS mas2rad lie in [0.3, 9]."""
    rho, phi = polar_grid(offset, n)
    scale = 2 * np.pi * RADIUS * MAS2RAD
    return rho * np.cos(phi) / scale, rho * np.sin(phi) / scale


def seeded_map(offset):
    """A degree-2 map (y00 = 1) and quadratic limb-darkening coefficients."""
    rng = np.random.default_rng(SEED + offset)
    y = np.concatenate([[1.0], rng.uniform(-0.25, 0.25, (YDEG + 1) ** 2 - 1)])
    u = (rng.uniform(0.1, 0.5), rng.uniform(0.0, 0.2))
    return y, u


@eqx.filter_jit
def _model(harmonix_map, uu, vv, t):
    return harmonix_map.model(uu, vv, t)  # one compilation serves every visibility case


def visibility(y, u, inc, obl, t, uu, vv):
    star = Surface(y=Ylm.from_dense(jnp.asarray(y)), inc=jnp.float64(inc), obl=jnp.float64(obl),
                   period=1.0, u=(jnp.float64(u[0]), jnp.float64(u[1])))
    return np.asarray(_model(Harmonix(star, jnp.float64(RADIUS)), jnp.asarray(uu), jnp.asarray(vv),
                             jnp.float64(t)))


def case_hsh_polynomials():
    return {"A": np.asarray(A_hsh_to_p(jmax(3)))}


def case_zernike_coefficients():
    rng = np.random.default_rng(SEED + 11)
    hsh = rng.standard_normal((3, jmax(3) + 1))
    return {"z": np.array([np.asarray(transform_to_zernike(h)) for h in hsh])}


def case_basis_transforms():
    rho, phi = polar_grid(21)
    Jvs = jnp.asarray(np.array([jv(n, rho) for n in range(6)]))
    jvs = jnp.asarray(np.array([spherical_jn(n, rho) for n in range(4)]))
    rho_j, phi_j = jnp.asarray(rho), jnp.asarray(phi)
    zern = []
    for j in range(jmax(4) + 1):
        n, m = j_to_nm(j)
        zern.append(np.asarray(zernike_FT_jax(n, m, Jvs)(rho_j, phi_j)))
    chsh = []
    for l in range(4):
        for m in range(-l, l + 1):
            if (l + m) % 2:
                chsh.append(np.asarray(CHSH_FT_jax(l, m, jvs)(rho_j, phi_j)))
    return {"zernike": np.array(zern), "chsh": np.array(chsh)}


def case_uniform_disk():
    uu, vv = baselines(31)
    y = np.zeros((YDEG + 1) ** 2)
    y[0] = 1.0
    return {"vis": visibility(y, (0.0, 0.0), np.pi / 2, 0.0, 0.0, uu, vv)}


def case_visibility_equator_on():
    uu, vv = baselines(41)
    y, u = seeded_map(42)
    return {"vis": visibility(y, u, np.pi / 2, 0.0, 0.0, uu, vv)}


def case_visibility_rotated():
    uu, vv = baselines(51)
    y, u = seeded_map(52)
    rng = np.random.default_rng(SEED + 53)
    inc, obl, t = rng.uniform(0.3, 1.3), rng.uniform(-0.8, 0.8), rng.uniform(0.05, 0.45)
    return {"vis": visibility(y, u, inc, obl, t, uu, vv)}
