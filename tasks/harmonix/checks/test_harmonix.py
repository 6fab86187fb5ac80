"""Checks for harmonix: the hemispheric-harmonic to polynomial and Zernike changes of
basis, the Fourier transforms of the Zernike terms and of the complementary hemispheric
harmonics, and the complex visibility of a limb-darkened, rotated spherical-harmonic map.

Independent values (checks/_harmonix.py, numpy and scipy only): the harmonics and
Zernike polynomials evaluated pointwise, a numerical Fourier transform over the unit
disk (Gauss-Legendre in r = sin t, 80 x 160 points: errors ~1e-14 at rho <= 9), and the
uniform disk's closed form 2 J1(rho) / rho. Tolerances: 1e-9 against values computed
independently (the code's only approximation, jax's bessel_jn with 100 backward steps,
is good to ~1e-14 on rho in [0.3, 9]; observed differences are ~1e-15), and rtol 1e-8
against the reference (the same operations, possibly reordered or with another exact
Bessel evaluation).
"""

import numpy as np
from scipy.special import j1

from _harmonix import (
    hsh_vectors, j_to_nm, jmax, norm_A, angular, polar_grid, rotated_view, seeded_map,
    sky_intensity, visibility, zernike, fourier, X, Y, Z, ylm)
from scipy.special import lpmv

ATOL = 1e-9


def close_to_reference(out, ref):
    out, ref = np.asarray(out), np.asarray(ref)
    assert out.shape == ref.shape, f"shape {out.shape} != reference {ref.shape}"
    np.testing.assert_allclose(out, ref, rtol=1e-8, atol=1e-10 * max(1.0, np.max(np.abs(ref))))


def sample_points(n=40):
    rng = np.random.default_rng(5)
    r = np.sqrt(rng.uniform(0, 1, n))
    phi = rng.uniform(-np.pi, np.pi, n)
    return r, phi


# ---- hemispheric harmonics in the polynomial and Zernike bases ----


def test_hsh_polynomials_expand_the_harmonics(outputs):
    """Row j of A_hsh_to_p: the (l, m) hemispheric harmonic as sum_k A[j, k] r^n_k ang_m_k."""
    A = np.asarray(outputs["hsh_polynomials"]["A"])
    assert A.shape == (jmax(3) + 1, jmax(3) + 1)
    r, phi = sample_points()
    z = np.sqrt(1 - r**2)
    powers = np.array([r ** j_to_nm(k)[0] * angular(j_to_nm(k)[1], phi) for k in range(len(A))])
    for j in range(len(A)):
        l, m = j_to_nm(j)
        expected = norm_A(l, abs(m)) * lpmv(abs(m), l, z) * angular(m, phi)
        np.testing.assert_allclose(A[j] @ powers, expected, atol=ATOL, err_msg=f"(l, m) = ({l}, {m})")


def test_hsh_polynomials_reference(outputs, reference):
    close_to_reference(outputs["hsh_polynomials"]["A"], reference["hsh_polynomials"]["A"])


def test_zernike_coefficients_same_function(outputs):
    """sum_j z_j Zernike_j equals sum_j h_j HSH_j on the disk."""
    zc = np.asarray(outputs["zernike_coefficients"]["z"])
    hsh = hsh_vectors()
    assert zc.shape == hsh.shape
    r, phi = sample_points()
    z = np.sqrt(1 - r**2)
    terms = [j_to_nm(j) for j in range(hsh.shape[1])]
    zern = np.array([zernike(n, m, r, phi) for n, m in terms])
    harm = np.array([norm_A(n, abs(m)) * lpmv(abs(m), n, z) * angular(m, phi) for n, m in terms])
    for h, c in zip(hsh, zc):
        np.testing.assert_allclose(c @ zern, h @ harm, atol=ATOL * max(1.0, np.max(np.abs(h))))


def test_zernike_coefficients_reference(outputs, reference):
    close_to_reference(outputs["zernike_coefficients"]["z"], reference["zernike_coefficients"]["z"])


# ---- Fourier transforms of the basis ----


def test_zernike_transforms_numerical(outputs):
    ft = np.asarray(outputs["basis_transforms"]["zernike"])
    rho, phi = polar_grid(21)
    assert ft.shape == (jmax(4) + 1, len(rho))
    r, th = np.hypot(X, Y), np.arctan2(Y, X)
    for j in range(len(ft)):
        n, m = j_to_nm(j)
        np.testing.assert_allclose(ft[j], fourier(zernike(n, m, r, th), rho, phi), atol=ATOL,
                                   err_msg=f"Zernike (n, m) = ({n}, {m})")


def test_zernike_transforms_reference(outputs, reference):
    close_to_reference(outputs["basis_transforms"]["zernike"], reference["basis_transforms"]["zernike"])


def test_chsh_transforms_numerical(outputs):
    ft = np.asarray(outputs["basis_transforms"]["chsh"])
    rho, phi = polar_grid(21)
    lms = [(l, m) for l in range(4) for m in range(-l, l + 1) if (l + m) % 2]
    assert ft.shape == (len(lms), len(rho))
    for k, (l, m) in enumerate(lms):
        np.testing.assert_allclose(ft[k], fourier(ylm(l, m, X, Y, Z), rho, phi), atol=ATOL,
                                   err_msg=f"complementary harmonic (l, m) = ({l}, {m})")


def test_chsh_transforms_reference(outputs, reference):
    close_to_reference(outputs["basis_transforms"]["chsh"], reference["basis_transforms"]["chsh"])


# ---- visibilities of whole maps ----


def test_uniform_disk_is_airy(outputs):
    """A uniform disk of angular radius R: V = 2 J1(rho) / rho, rho = 2 pi |uv| R."""
    vis = np.asarray(outputs["uniform_disk"]["vis"])
    rho, _ = polar_grid(31, 20)
    np.testing.assert_allclose(vis, 2 * j1(rho) / rho, atol=ATOL)


def test_equator_on_map_numerical(outputs):
    vis = np.asarray(outputs["visibility_equator_on"]["vis"])
    rho, phi = polar_grid(41, 20)
    y, u = seeded_map(42)
    np.testing.assert_allclose(vis, visibility(sky_intensity(y, u), rho, phi), atol=ATOL)


def test_rotated_map_numerical(outputs):
    vis = np.asarray(outputs["visibility_rotated"]["vis"])
    rho, phi = polar_grid(51, 20)
    y, u = seeded_map(52)
    inc, obl, t = rotated_view()
    expected = visibility(sky_intensity(y, u, inc, obl, 2 * np.pi * t), rho, phi)
    np.testing.assert_allclose(vis, expected, atol=ATOL)


def test_visibilities_reference(outputs, reference):
    for name in ("uniform_disk", "visibility_equator_on", "visibility_rotated"):
        close_to_reference(outputs[name]["vis"], reference[name]["vis"])
