import jax.numpy as jnp

def balance_factorization(X,Y):
    cobras_balance = Y.T @ X

    U_cobras, S_cobras, Vh_cobras = jnp.linalg.svd(cobras_balance, 
                                                   full_matrices = False
                                                   )
    return U_cobras, S_cobras, Vh_cobras

def get_phi_psi(X, Y, U, S, Vh, r):
    S_inv_sqrt_r = jnp.diag(1.0 / jnp.sqrt(S[:r]))
    U_r = U[:, :r]
    Vh_r = Vh[:r, :]
    
    Phi = X @ Vh_r.T @ S_inv_sqrt_r
    Psi = Y @ U_r @ S_inv_sqrt_r
    
    return Phi, Psi


def get_modes(x_real, g_real, r = 20): 
    # <paper2code name="sensitivity-balanced modes">
    n_grad = x_real.shape[0]
    n_snap = g_real.shape[0]
    Y_cobras = 1/jnp.sqrt(n_grad) * g_real.T
    X_cobras = 1/jnp.sqrt(n_snap) * x_real.T

    cobras_balance = Y_cobras.T @ X_cobras

    U_cobras, S_cobras, Vh_cobras = jnp.linalg.svd(cobras_balance, full_matrices = False)
    Phi_cobras, Psi_cobras = get_phi_psi(X_cobras, Y_cobras, U_cobras, S_cobras, Vh_cobras, r=r)
    
    return {'Phi': Phi_cobras, 'Psi': Psi_cobras, 'S': S_cobras}
    # </paper2code name="sensitivity-balanced modes">
