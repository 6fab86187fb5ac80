import jax
jax.config.update("jax_enable_x64", True)

import jax.numpy as jnp

from jax import grad, jit, vjp
from jax import random, lax, vmap


def gauss_shift(x, t, vg, L, x0):
    # <paper2code name="moving gaussian window">
    x_shift = (x - x0 - t * vg)
    bump = jnp.exp(-x_shift**2/(2*L**2))
    norm = jnp.sqrt(2*jnp.pi*L**2)
    return bump / norm
    # </paper2code name="moving gaussian window">

gauss_shift_v = vmap(gauss_shift, in_axes=(None,0,None, None, None))


def qoi(traj, x, t, vg, L, x0, dx): 
    '''
    traj: ndarray(complex128)
        shape: n_t, n_x
    '''   
    # <paper2code name="localized quantity of interest">
    traj_amps_sq = jnp.abs(traj)**2
    
    time_bump = gauss_shift_v(x, t,vg,L,x0)
    
    projection = dx * jnp.einsum('tx,tx->t', traj_amps_sq, time_bump)
    return projection
    # </paper2code name="localized quantity of interest">
