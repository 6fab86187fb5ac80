
'''
written by SINQ authors
'''

import torch
from torch import nn
import numpy as np
from .sinkhorn import sinkhorn_log
from collections import deque

def quantize_rtn(matrix, awq_scales=None, min_max=[], niter=None):
    w = matrix
    if not (awq_scales is None):
        w = w * awq_scales
    dtype = w.dtype
    max_val = w.amax(dim=1, keepdim=True)
    min_val = w.amin(dim=1, keepdim=True)
    max_int = min_max[1]
    min_int = min_max[0]
    scales = (max_val - min_val).clamp(min=1e-4) / max_int
    zeros = (-torch.round(min_val / scales))
    q = torch.clamp(torch.round(w / scales + zeros), min_int, max_int)
    
    if not (awq_scales is None):
        scales = scales / awq_scales
    return q, scales, zeros, dtype

def dequantize_rtn(q, scales, zeros, dtype):
    return ((q - zeros)*scales).to(dtype)

def rtn_fake_quant(matrix, scale, min_max):
    return dequantize_rtn(*quantize_rtn(matrix, scale, min_max))

def sinq_fake_quant(matrix, awq_scales, min_max):
    matrix, mu1, mu2 = sinkhorn_log(matrix, 16)
    matrix = matrix*awq_scales
    dq = dequantize_rtn(*quantize_rtn(matrix, None, min_max))
    mu1 = mu1 / awq_scales
    return dq*mu1*mu2


def tiled_fake_quant_rectangle(M, fakequant, min_max, block=64, transpose=False, scales=None):
    if transpose:
        M = M.T
    mshape = M.shape
    H,W = M.shape
    assert W%block==0, 'block must divide W'
    n_w = W//block

    M = M.view(H, W//block, block)
    M_batched = M.permute(1,0,2).contiguous().view(n_w, H, block)

    if not (scales is None):
        scales = scales.view(1, n_w, block).permute(1,0,2).contiguous().view(n_w, 1, block)
    def process_block(mat, scales):
        return fakequant(mat, scales, min_max) 
    DQ_batched = torch.vmap(process_block, randomness='different')(M_batched, scales)
    DQ = DQ_batched.view(n_w, H, block).permute(1,0,2).contiguous()
    return DQ.reshape(mshape) if not transpose else DQ.reshape(mshape).T


def compute_awq_scale(weights, activations, min_max, tile=128, num_alphas=20, num_betas=1, use_weightscale=True, method=None):
    """
    Compute AWQ scaling factors with grid search over alpha values.
    Returns best scale factors and best alpha based on reconstruction error.
    """
    torch.cuda.empty_cache()
    alpha_values = np.arange(0, 1, 1./num_alphas) if num_alphas > 1 else [0]
    beta_values = np.arange(0, 1, 1./num_betas) if num_betas > 1 else [0]
    dtype = weights.dtype
    activations = activations.to(weights.device).to(weights.dtype)


    # Compute activation importance - ensure it matches weight dimensions
    mu_tokens = activations.float().abs().mean([0,1])
    mu_weights = weights.float().abs().mean([0])
    std_tokens = activations.float().std([0,1])

    best_scale = torch.ones_like(mu_tokens.view(-1))
    best_error = float('inf')


    torch.cuda.empty_cache()
    for alpha in alpha_values:
        for beta in beta_values:
            scales = (mu_tokens.view(-1).pow(alpha) * std_tokens.view(-1).pow(beta)).clamp(min=1e-4)

            if use_weightscale:
                # scaling with the weights is used in the auto-awq code as well
                scales = (scales / (mu_weights.pow(1-alpha) + 1e-4)).clamp(min=1e-4)

            scales = scales / (scales.max() * scales.min()).sqrt()

            # Calculate reconstruction error
            gt = activations @ weights.T
            fake_quant = sinq_fake_quant if 'sinq' in method else rtn_fake_quant
            Wq = tiled_fake_quant_rectangle(weights, fakequant=fake_quant, min_max=min_max, block=tile, scales=scales)
            pred = activations @ Wq.T.to(weights.dtype)
            if 'l1' in method:   
                reconstruction_error = ((pred - gt)).abs().mean()
            else: 
                reconstruction_error = ((pred - gt)).square().mean()


            # Update best alpha
            if reconstruction_error < best_error:
                best_error = reconstruction_error.item()
                best_scale = scales

    return best_scale.to(dtype)#, best_alpha, best_dq, best_error
