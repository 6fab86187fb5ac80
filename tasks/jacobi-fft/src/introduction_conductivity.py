# The code cells of notebooks/introduction_conductivity.ipynb (MartinLadecky/
# J-FFT-solver-for-smooth-high-contrast-data at 68e983ce), MIT licence (LICENSE).
# Introduction example - Conductivity: 2D steady-state conductivity on a periodic pixel
# grid (linear triangles), solved by PCG with the Green, Jacobi and Green-Jacobi
# preconditioners. The notebook's globals are module globals here: cell 6 runs inside
# problem_parameters(), and the body of cell 10's loop is cut into functions at its own
# comment headings (see notes.md). Plotting (cell 12) is left out.
import numpy as np
import scipy as sc
import scipy.sparse.linalg as sp


# ## Utility Functions (cell 4)
def get_shape_function_gradients(discretization_type, pixel_size):
    """
    Returns the shape function gradients and quadrature weights for a single pixel.
    Currently supports 'linear_triangles'.
    """
    if discretization_type == 'linear_triangles':
        ndim = 2
        nb_quad = 2
        dx, dy = pixel_size
        # B(dim, quad_point, node_idx)
        B = np.zeros([ndim, nb_quad, 4])
        # first quad point
        B[:, 0, :] = [[-1 / dx, 0, 1 / dx, 0],
                      [-1 / dy, 1 / dy, 0, 0]]
        # second quad point
        B[:, 1, :] = [[0, -1 / dx, 0, 1 / dx],
                      [0, 0, -1 / dy, 1 / dy]]

        weights = np.array([dx * dy / 2, dx * dy / 2])
        return B.reshape(ndim, nb_quad, 2, 2), weights

def get_gradient_operators(pixel_size, N, dofs_per_node):
    """
    Creates and returns the gradient (B) and weighted divergence (Bw_t) operators
    for the given grid and discretization.
    """
    ndim = 2
    B_dqij, weights = get_shape_function_gradients('linear_triangles', pixel_size)
    nb_quad = weights.size

    def B_op(u_ixy):
        grad_u_ijqxy = np.zeros([dofs_per_node, ndim, nb_quad, *N])
        for pixel_node in np.ndindex(2, 2):
            grad_u_ijqxy += np.einsum('jq,ixy...->ijqxy...',
                                      B_dqij[(..., *pixel_node)],
                                      np.roll(u_ixy, -1 * np.array(pixel_node), axis=tuple(range(1, ndim + 1))),
                                      optimize='optimal')
        return grad_u_ijqxy

    def Bw_t_op(flux_ijqxyz):
        div_flux_ixy = np.zeros([dofs_per_node, *N])
        # apply quadrature weights
        flux_weighted = np.einsum('ijq...,q->ijq...', flux_ijqxyz, weights, optimize='optimal')
        for pixel_node in np.ndindex(2, 2):
            div_fnxyz_pixel_node = np.einsum('jq,ijqxy...->ixy...',
                                             B_dqij[(..., *pixel_node)],
                                             flux_weighted, optimize='optimal')
            div_flux_ixy += np.roll(div_fnxyz_pixel_node, 1 * np.array(pixel_node), axis=tuple(range(1, ndim + 1)))
        return div_flux_ixy

    return B_op, Bw_t_op, weights

def solve_sparse(A, b, M=None):
    """
    A simple wrapper around scipy's Conjugate Gradient solver that also counts iterations.
    """
    num_iters = 0
    def callback(xk):
        nonlocal num_iters
        num_iters += 1
    x, status = sc.sparse.linalg.cg(A, b, M=M, atol=1e-6, maxiter=10000, callback=callback)
    return x, status, num_iters

def apply_smoother_log10(phase):
    """
    Applies a Gaussian-like smoothing filter to the material phase field in log10 space.
    This helps to smooth out sharp interfaces.
    """
    # <paper2code name="log10 smoothing filter">
    kernel = np.array([[0.0625, 0.125, 0.0625],
                       [0.125, 0.25, 0.125],
                       [0.0625, 0.125, 0.0625]])
    # Apply convolution for smoothing (assuming phase is at least 3D [quad, x, y])
    smoothed_arr = sc.signal.convolve2d(np.log10(phase[0]), kernel, mode='same', boundary='wrap')
    # Fix boundaries
    smoothed_arr[0, :] = 0
    smoothed_arr[-1, :] = 0
    smoothed_arr[:, 0] = 0
    smoothed_arr[:, -1] = 0
    return 10 ** smoothed_arr
    # </paper2code name="log10 smoothing filter">


# ## Problem Parameters (cell 6; the grid size is an argument, 64 in the notebook)
def problem_parameters(N_x_N_y=64):
    global nb_quad_points_per_pixel, ndim, N_x, N_y, N, delta_x, delta_y, pixel_size, domain_vol
    global n_u_dofs, ndof, temp_shape, grad_shape, dot21, fft, ifft, B, Bw_t, quadrature_weights
    # Problem Parameters
    # ------------------
    nb_quad_points_per_pixel = 2
    ndim = 2
    N_x = N_y = N_x_N_y  # Number of voxels in each direction
    N = (N_x, N_y)
    delta_x, delta_y = 1 / N_x, 1 / N_y
    pixel_size = (delta_x, delta_y)
    domain_vol = (delta_x * N_x) * (delta_y * N_y)

    # Degrees of freedom configuration
    n_u_dofs = 1  # 1 for scalar field (conductivity)
    ndof = n_u_dofs * np.prod(np.array(N))
    temp_shape = (n_u_dofs,) + N
    grad_shape = (n_u_dofs, ndim, nb_quad_points_per_pixel) + N

    # Basic FFT operators and tensor dot products
    dot21 = lambda A, v: np.einsum('ij...,fj...  ->fi...', A, v)
    fft = lambda x: np.fft.fftn(x, [*N])
    ifft = lambda x: np.fft.ifftn(x, [*N])

    # Initialize gradient operators
    B, Bw_t, quadrature_weights = get_gradient_operators(pixel_size, N, n_u_dofs)


problem_parameters(64)


# ## Problem Definition (cell 8)
def problem_definition(inc_contrast=1e-4):
    # Initial phase distribution: Square inclusion in the center
    phase = np.ones([nb_quad_points_per_pixel, N_x, N_y])
    phase[:, phase.shape[1] * 1 // 4 + 1:phase.shape[1] * 3 // 4 + 1,
          phase.shape[2] * 1 // 4 + 1:phase.shape[2] * 3 // 4 + 1] *= inc_contrast
    return phase


# ## Main Loop (cell 10), one filter application at a time
def apply_filters(phase):
    # Apply smoothing iteratively to test how it affects convergence
    for apply in np.arange(10):
        smoothed = apply_smoother_log10(phase)
        phase[0] = smoothed
        phase[1] = smoothed
    return phase


def system(phase, mat_contrast=1.):
    # Update material data with smoothed phase field
    A2_0 = mat_contrast * np.eye(ndim)
    mat_data_ijqxy = np.einsum('ij,qxy', A2_0, phase)

    # Macroscopic loading
    macro_grad_ij = np.zeros([1, ndim])
    macro_grad_ij[0, 0] = 1
    E_ijqxy = np.zeros(grad_shape)
    E_ijqxy += macro_grad_ij[(slice(None), slice(None)) + (np.newaxis,) * (len(E_ijqxy.shape) - 2)]

    # Define system matrix operator K(u) and RHS vector b
    K_fun_I = lambda x: Bw_t(
        dot21(mat_data_ijqxy,
              B(u_ixy=x.reshape(temp_shape)))).reshape(-1)
    b_I = -Bw_t(dot21(mat_data_ijqxy, E_ijqxy)).reshape(-1)
    return mat_data_ijqxy, E_ijqxy, K_fun_I, b_I


def preconditioners(mat_data_ijqxy):
    # --- Preconditioners ---
    # <paper2code name="green-jacobi preconditioners">

    # 1. Green's Preconditioner (Standard FFT-based)
    # <paper2code name="green preconditioner">
    ref_mat_data_ij = np.array([[1, 0], [0, 1]])
    K_ref_fun = lambda x: Bw_t(dot21(ref_mat_data_ij, B(u_ixy=x.reshape(temp_shape))))

    G_diag_ixy = np.zeros([n_u_dofs, n_u_dofs, *N])
    for d in range(n_u_dofs):
        unit_impuls_ixy = np.zeros(temp_shape)
        unit_impuls_ixy[(d,) + ndim * (0,)] = 1
        G_diag_ixy[:, d, ...] = K_ref_fun(x=unit_impuls_ixy)

    G_diag_ixy = np.real(fft(x=G_diag_ixy))
    G_diag_ixy[G_diag_ixy != 0] = 1 / G_diag_ixy[G_diag_ixy != 0]
    Green_fun = lambda x: np.real(ifft(G_diag_ixy * fft(x=x.reshape(temp_shape)))).reshape(-1)
    # </paper2code name="green preconditioner">

    # 2. Jacobi Preconditioner (Diagonal of the system matrix)
    # <paper2code name="jacobi scaling">
    J_diag_ixy = np.zeros([n_u_dofs, *N])
    for x_i in range(2):
        for y_i in range(2):
            comb_impuls_ixy = np.zeros(temp_shape)
            comb_impuls_ixy[0, x_i::2, y_i::2] = 1.0
            comb_impuls_ixy = Bw_t(dot21(A=mat_data_ijqxy, v=B(u_ixy=comb_impuls_ixy)))
            J_diag_ixy[0, x_i::2, y_i::2] = np.where(comb_impuls_ixy[0, x_i::2, y_i::2] != 0.,
                                                     1 / np.sqrt(comb_impuls_ixy[0, x_i::2, y_i::2]), 1.)

    Jacobi_fun = lambda x: J_diag_ixy * J_diag_ixy * x.reshape(temp_shape)
    # </paper2code name="jacobi scaling">

    # 3. Green-Jacobi Preconditioner (Hybrid)
    GreenJacobi_fun = lambda x: (J_diag_ixy * Green_fun(J_diag_ixy * x.reshape(temp_shape)).reshape(temp_shape))
    # </paper2code name="green-jacobi preconditioners">
    return G_diag_ixy, Green_fun, J_diag_ixy, Jacobi_fun, GreenJacobi_fun


def solve_and_count(K_fun_I, b_I, Green_fun, Jacobi_fun, GreenJacobi_fun):
    # --- Solve and store iteration counts ---

    # Solve with Green Preconditioner
    _, _, n_G = solve_sparse(sp.LinearOperator((ndof, ndof), K_fun_I), b_I, sp.LinearOperator((ndof, ndof), Green_fun))

    # Solve with Jacobi Preconditioner
    _, _, n_J = solve_sparse(sp.LinearOperator((ndof, ndof), K_fun_I), b_I, sp.LinearOperator((ndof, ndof), Jacobi_fun))

    # Solve with Green-Jacobi Preconditioner
    _, _, n_GJ = solve_sparse(sp.LinearOperator((ndof, ndof), K_fun_I), b_I, sp.LinearOperator((ndof, ndof), GreenJacobi_fun))
    return n_G, n_J, n_GJ


def main_loop(nb_of_filters=100, inc_contrast=1e-4, mat_contrast=1.):
    phase = problem_definition(inc_contrast)
    nb_it_G_wrt_filter = []
    nb_it_GJ_wrt_filter= []
    nb_it_J_wrt_filter=[]
    for aplication in np.arange(nb_of_filters):
        if aplication != 0:
            phase = apply_filters(phase)
        mat_data_ijqxy, E_ijqxy, K_fun_I, b_I = system(phase, mat_contrast)
        G_diag_ixy, Green_fun, J_diag_ixy, Jacobi_fun, GreenJacobi_fun = preconditioners(mat_data_ijqxy)
        n_G, n_J, n_GJ = solve_and_count(K_fun_I, b_I, Green_fun, Jacobi_fun, GreenJacobi_fun)
        nb_it_G_wrt_filter.append(n_G)
        nb_it_J_wrt_filter.append(n_J)
        nb_it_GJ_wrt_filter.append(n_GJ)
        print(f'Filter {aplication}: Green={n_G}, Jacobi={n_J}, Green-Jacobi={n_GJ}')
    return nb_it_G_wrt_filter, nb_it_J_wrt_filter, nb_it_GJ_wrt_filter
