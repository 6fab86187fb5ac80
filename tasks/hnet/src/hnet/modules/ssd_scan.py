"""Pure-PyTorch stand-in for mamba_ssm's Triton kernel
``mamba_ssm.ops.triton.ssd_combined.mamba_chunk_scan_combined`` (not part of the
authors' H-Net repository: rcb added it so that the code runs on a CPU).

It computes the same selective state-space recurrence, step by step instead of in
chunks. For each batch b, head h, head channel p and state channel n:

    state[t] = exp(dt[t, h] * A[h]) * state[t - 1] + dt[t, h] * B[t, g(h), n] * x[t, h, p]
    y[t, h, p] = sum_n C[t, g(h), n] * state[t, h, p, n]  (+ D[h] * x[t, h, p])

with state[-1] = 0 (or initial_states), g(h) the group of head h, and the state reset
to zero where seq_idx changes (packed sequences). ``chunk_size`` only matters for the
kernel's blocking and is ignored here.
"""

import torch
import torch.nn.functional as F


def mamba_chunk_scan_combined(
    x,
    dt,
    A,
    B,
    C,
    chunk_size,
    D=None,
    z=None,
    dt_bias=None,
    initial_states=None,
    seq_idx=None,
    dt_softplus=False,
    return_final_states=False,
):
    """x: (batch, seqlen, nheads, headdim); dt: (batch, seqlen, nheads); A: (nheads,);
    B, C: (batch, seqlen, ngroups, dstate); seq_idx: (batch, seqlen) or None.
    Returns y: (batch, seqlen, nheads, headdim), in x's dtype."""
    assert z is None, "z gating is not supported by this stand-in"
    batch, seqlen, nheads, headdim = x.shape
    ngroups, dstate = B.shape[2], B.shape[3]
    assert nheads % ngroups == 0
    out_dtype = x.dtype

    xf = x.float()
    dtf = dt.float()
    if dt_bias is not None:
        dtf = dtf + dt_bias.float()
    if dt_softplus:
        dtf = F.softplus(dtf)
    Af = A.float()
    heads_per_group = nheads // ngroups
    Bf = B.float().repeat_interleave(heads_per_group, dim=2)  # (b, l, h, n)
    Cf = C.float().repeat_interleave(heads_per_group, dim=2)  # (b, l, h, n)

    if initial_states is not None:
        state = initial_states.float().clone()  # (b, h, p, n)
    else:
        state = torch.zeros(batch, nheads, headdim, dstate, device=x.device)

    ys = []
    for t in range(seqlen):
        if seq_idx is not None and t > 0:
            new_seq = (seq_idx[:, t] != seq_idx[:, t - 1]).view(batch, 1, 1, 1)
            state = torch.where(new_seq, torch.zeros_like(state), state)
        decay = torch.exp(dtf[:, t] * Af)  # (b, h)
        inp = (dtf[:, t, :, None, None] * xf[:, t, :, :, None]) * Bf[:, t, :, None, :]
        state = decay[:, :, None, None] * state + inp
        y = (state * Cf[:, t, :, None, :]).sum(dim=-1)  # (b, h, p)
        if D is not None:
            y = y + D.float().view(1, nheads, 1) * xf[:, t]
        ys.append(y)
    y = torch.stack(ys, dim=1).to(out_dtype)
    if return_final_states:
        return y, state
    return y
