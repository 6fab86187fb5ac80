"""Stand-in for torchdiffeq.odeint (torchdiffeq is not in this task's env): fixed-grid
explicit Euler and Heun only, returning the state at every time of `t` stacked on a new
first axis, as torchdiffeq does. Written for this task, not torchdiffeq's code (notes.md)."""

import torch


def odeint(func, y0, t, method="euler", atol=None, rtol=None, **kwargs):
    ys = [y0]
    y = y0
    for t0, t1 in zip(t[:-1], t[1:]):
        dt = t1 - t0
        k1 = func(t0, y)
        if method == "euler":
            y = y + dt * k1
        elif method == "heun":
            k2 = func(t1, y + dt * k1)
            y = y + 0.5 * dt * (k1 + k2)
        else:
            raise NotImplementedError(f"stand-in odeint has no method {method!r}")
        ys.append(y)
    return torch.stack(ys)
