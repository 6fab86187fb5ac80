"""Cases for H-Net's dynamic chunking (arXiv 2507.07955): each drives the authors'
routing module, chunk and dechunk layers, straight-through estimator and ratio loss
on seeded inputs (inputs/_hnet_inputs.py) and returns what they computed. No
assertion and no expected value here: the checks, in a sandbox of their own, rebuild
the inputs and decide.
"""

import torch

from _hnet_inputs import (
    D_DECHUNK, D_ROUTE, HEADDIM, RATIO_N, chunk_inputs, dechunk_inputs, pipeline_inputs,
    ratio_inputs, routing_inputs, ste_inputs,
)
from hnet.models.hnet import ste_func
from hnet.modules.dc import ChunkLayer, DeChunkLayer, RoutingModule, RoutingModuleOutput
from hnet.utils.train import load_balancing_loss

torch.set_num_threads(1)


def t(a):
    return torch.from_numpy(a)


def routing_module(r):
    router = RoutingModule(D_ROUTE)
    with torch.no_grad():
        router.q_proj_layer.weight.copy_(t(r["wq"]))
        router.k_proj_layer.weight.copy_(t(r["wk"]))
    return router


def routed(out):
    return {
        "boundary_prob": out.boundary_prob.detach(),
        "boundary_mask": out.boundary_mask,
        "selected_probs": out.selected_probs.detach(),
    }


def case_routing():
    r = routing_inputs()
    router = routing_module(r)
    with torch.no_grad():
        padded = router(t(r["padded"]), mask=t(r["mask"]))
        packed = router(t(r["packed"]), cu_seqlens=t(r["cu_seqlens"]))
        fresh = RoutingModule(D_ROUTE)(t(r["padded"]), mask=t(r["mask"]))
    return {"padded": routed(padded), "packed": routed(packed), "identity_init": routed(fresh)}


def chunked(result):
    h, cu, max_seqlen, mask = result
    return {"hidden": h, "cu_seqlens": cu, "max_seqlen": max_seqlen, "mask": mask}


def case_chunk():
    c = chunk_inputs()
    layer = ChunkLayer()
    padded = layer(t(c["hidden"]), t(c["boundary_mask"]), mask=t(c["mask"]))
    packed = layer(t(c["packed"]), t(c["packed_boundary_mask"]), cu_seqlens=t(c["cu_seqlens"]))
    return {"padded": chunked(padded), "packed": chunked(packed)}


def two_column(p):
    p = t(p)
    return torch.stack((1 - p, p), dim=-1)


def case_dechunk():
    d = dechunk_inputs()
    layer = DeChunkLayer(D_DECHUNK, dtype=torch.float32, headdim=HEADDIM)
    padded = layer(
        t(d["chunks"]), t(d["boundary_mask"]), two_column(d["prob"]), mask=t(d["mask"])
    )
    packed = layer(
        t(d["packed_chunks"]), t(d["packed_boundary_mask"]), two_column(d["packed_prob"]),
        cu_seqlens=t(d["next_cu_seqlens"]),
    )
    one_head = DeChunkLayer(D_DECHUNK, dtype=torch.float32, headdim=D_DECHUNK)(
        t(d["chunks"]), t(d["boundary_mask"]), two_column(d["prob"]), mask=t(d["mask"])
    )
    return {"padded": padded, "packed": packed, "one_head": one_head}


def case_chunk_dechunk():
    """Chunk then dechunk with no main network in between: with every token a boundary
    of probability 1, and with the chunk inputs' boundaries at probability 1."""
    c = chunk_inputs(D_DECHUNK)
    layer = DeChunkLayer(D_DECHUNK, dtype=torch.float32, headdim=HEADDIM)
    hidden, mask = t(c["hidden"]), t(c["mask"])
    result = {}
    for name, bmask in (("all_boundaries", mask.clone()), ("hard", t(c["boundary_mask"]))):
        bmask[:, 0] = True
        h, _, _, next_mask = ChunkLayer()(hidden, bmask, mask=mask)
        prob = torch.stack((torch.zeros(bmask.shape), torch.ones(bmask.shape)), dim=-1)
        result[name] = layer(h, bmask, prob, mask=mask)
    return result


def case_ste():
    s = ste_inputs()
    p = t(s["p"]).requires_grad_(True)
    out = t(s["out"]).requires_grad_(True)
    y = out * ste_func(p)
    (y * t(s["w"])).sum().backward()
    return {"y": y.detach(), "grad_p": p.grad, "grad_out": out.grad}


def ratio_loss(p, bmask, N):
    prob = two_column(p).requires_grad_(True)
    out = RoutingModuleOutput(
        boundary_prob=prob, boundary_mask=t(bmask), selected_probs=prob.max(-1, keepdim=True).values
    )
    loss = load_balancing_loss(out, N)
    loss.backward()
    return {"loss": loss.detach(), "grad": prob.grad}


def case_ratio_loss():
    r = ratio_inputs()
    result = {}
    for N in RATIO_N:
        result[f"random_N{N:g}"] = ratio_loss(r["p"], r["mask"], N)
    result["balanced_N3"] = ratio_loss(r["balanced_p"], r["balanced_mask"], 3.0)
    return result


def case_pipeline():
    """One dynamic-chunking layer as H-Net wires it (hnet/models/hnet.py at the pinned
    commit): route, chunk, a main network on the chunks, dechunk, then the decoder input
    out * STE(confidence) + residual; with the gradient of a weighted sum of it."""
    r = pipeline_inputs()
    router = routing_module(r)
    hidden = t(r["padded"]).requires_grad_(True)
    mask = t(r["mask"])
    bpred = router(hidden, mask=mask)
    h, _, _, next_mask = ChunkLayer()(hidden, bpred.boundary_mask, mask=mask)
    h = torch.tanh(h @ t(r["w_main"]))
    dechunk = DeChunkLayer(D_ROUTE, dtype=torch.float32, headdim=HEADDIM)
    out = dechunk(h, bpred.boundary_mask, bpred.boundary_prob, mask=mask)
    residual = 0.5 * hidden
    y = out * ste_func(bpred.selected_probs) + residual
    (y * t(r["w_out"]) * mask[..., None]).sum().backward()
    return {
        "y": y.detach(),
        "grad": hidden.grad,
        "boundary_mask": bpred.boundary_mask,
        "next_mask": next_mask,
    }
