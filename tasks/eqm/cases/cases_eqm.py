"""Cases for the eqm task: drive the authors' EqM code on small seeded inputs, on CPU."""
from types import SimpleNamespace

import numpy as np
import torch

from eqm_inputs import (
    decay_levels, energy_input, gmm_score, gmm_start, quadratic_field, quadratic_problem,
    sampler_eqm_input, seed, training_data,
)
from models import EqM
from sample_gd import sample_gd
from transport import create_transport

torch.set_num_threads(1)


def _transport():
    return create_transport("Linear", "velocity", None, None, None)


def _tiny_eqm(ebm="none", dtype=torch.float64):
    torch.manual_seed(seed() + 31)
    model = EqM(input_size=4, patch_size=2, in_channels=4, hidden_size=32, depth=1, num_heads=2,
                num_classes=1000, learn_sigma=True, uncond=True, ebm=ebm)
    with torch.no_grad():
        for name, p in model.named_parameters():
            if name != "pos_embed":
                p.normal_(0.0, 0.2)
    model.eval()
    model = model.to(dtype)
    model.t_embedder.float()  # its sinusoidal features are float32 by construction; c = t + y promotes
    return model


# ---------------------------------------------------------------- training target

def case_truncated_decay():
    levels = torch.from_numpy(decay_levels())
    return {"ct": _transport().get_ct(levels)}


def case_training_target():
    x1 = torch.from_numpy(training_data())
    seen = []

    def model(xt, t, **kwargs):
        seen.append((xt.detach().clone(), t.detach().clone()))
        return torch.tanh(xt) + 0.1 * xt

    torch.manual_seed(seed() + 37)
    terms = _transport().training_losses(model, x1)
    xt, t = seen[0]
    return {"calls": len(seen), "xt": xt, "t": t, "pred": terms["pred"], "loss": terms["loss"]}


def case_noise_and_level_sampling():
    x1 = torch.from_numpy(training_data())
    torch.manual_seed(seed() + 41)
    t, x0, x1_out = _transport().sample(x1)
    # a noise-prediction transport with train_eps 0.2 (sample_eps 0.05) samples levels in [0.2, 0.8]
    t_eps, _, _ = create_transport("Linear", "noise", None, 0.2, 0.05).sample(x1)
    return {"t": t, "x0": x0, "x1": x1_out, "t_eps": t_eps}


# ---------------------------------------------------------------- explicit energy

def case_explicit_energy():
    x_np, v_np = energy_input()
    y = torch.tensor([3, 500, 999])
    t = torch.zeros(3, dtype=torch.float64)
    model = _tiny_eqm("none")
    raw = model(torch.tensor(x_np), t, y).detach()
    out = {"raw": raw}
    for ebm in ("l2", "dot", "mean"):
        model.ebm = ebm
        grad, energy = model(torch.tensor(x_np), t, y, get_energy=True)
        h = 1e-5
        _, e_plus = model(torch.tensor(x_np + h * v_np), t, y, get_energy=True)
        _, e_minus = model(torch.tensor(x_np - h * v_np), t, y, get_energy=True)
        plain = model(torch.tensor(x_np), t, y)
        out[ebm] = {
            "grad": grad.detach(),
            "energy": energy.detach(),
            "plain": plain.detach(),
            "fd": ((e_plus - e_minus) / (2 * h)).detach(),
            "grad_dot_v": (grad.detach() * torch.tensor(v_np)).sum(dim=(1, 2, 3)),
        }
    return out


def case_explicit_energy_train():
    """The learned gradient must stay differentiable for training (second-order backward)."""
    x_np, _ = energy_input()
    y = torch.tensor([3, 500, 999])
    t = torch.zeros(3, dtype=torch.float64)
    out = {}
    for ebm in ("l2", "dot"):
        model = _tiny_eqm(ebm)
        grad = model(torch.tensor(x_np), t, y, train=True)
        loss = (grad ** 2).mean()
        loss.backward()
        out[ebm] = {"loss": loss.detach(), "wgrad": model.final_layer.linear.weight.grad.detach()}
    return out


# ---------------------------------------------------------------- gradient-descent sampler

def _field_fn(field, as_tuple=False):
    calls = []

    def model_fn(x, t, y, cfg_scale):
        calls.append(1)
        out = torch.from_numpy(field(x.numpy()))
        return (out, None) if as_tuple else out
    return model_fn, calls


def case_sampler_gmm():
    z = torch.from_numpy(gmm_start())
    y = torch.zeros(z.shape[0], dtype=torch.long)
    out = {}
    for sampler in ("gd", "ngd"):
        fn, calls = _field_fn(gmm_score)
        args = SimpleNamespace(sampler=sampler, stepsize=0.03, mu=0.3, num_sampling_steps=150, cfg_scale=1.0)
        out[sampler] = {"x": sample_gd(fn, z.clone(), y, args), "calls": len(calls)}
    return out


def case_sampler_quadratic():
    c, k, z_np = quadratic_problem()
    y = torch.zeros(z_np.shape[0], dtype=torch.long)
    out = {}
    for sampler, as_tuple in (("gd", False), ("ngd", False), ("gd_tuple", True), ("ngd_tuple", True)):
        fn, calls = _field_fn(lambda x: quadratic_field(x, c, k), as_tuple=as_tuple)
        args = SimpleNamespace(sampler=sampler.split("_")[0], stepsize=0.1, mu=0.3, num_sampling_steps=7,
                               cfg_scale=1.0)
        out[sampler] = {"x": sample_gd(fn, torch.from_numpy(z_np.copy()), y, args), "calls": len(calls)}
    return out


def case_sampler_eqm_model():
    z_np, y_np = sampler_eqm_input()
    model = _tiny_eqm("none", dtype=torch.float32)
    out = {}
    for steps in (5, 6):
        for sampler, cfg in (("gd", 1.0), ("ngd", 1.0), ("ngd", 1.5)):
            args = SimpleNamespace(sampler=sampler, stepsize=0.1, mu=0.3, num_sampling_steps=steps, cfg_scale=cfg)
            fn = model.forward_with_cfg if cfg > 1.0 else model.forward
            x = sample_gd(fn, torch.from_numpy(z_np.copy()), torch.from_numpy(y_np), args)
            out[f"{sampler}_cfg{cfg}_steps{steps}"] = x
    return out
