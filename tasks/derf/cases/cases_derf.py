"""Cases for Derf (Dynamic erf): each drives the authors' code on small seeded inputs
and returns plain data.

- the ViT Dynamic_erf module on channels-last tokens and channels-first images, with
  the gradients of a fixed linear loss;
- the ViT LayerNorm -> Derf conversion of a tiny ConvNeXt-like model (a LayerNorm2d in
  the stem, LayerNorms in the blocks and before the head), and of bare norm layers;
- nanoGPT's Dynamic_erf (the authors' language-model patch), with and without bias;
- nanoGPT with the authors' Derf patch (2 layers, 16 channels) under norm_type derf,
  dyt and ln: which norm sits where, its alpha, the learnable embedding scale, the
  first block's input, logits, loss and gradients.

Inputs come from inputs/_derf_inputs.py (seeded by RCB_SEED), which the checks import
too. Weights of the tiny models come from torch.manual_seed(RCB_SEED + k): the checks
never rebuild them and compare those outputs with the reference's instead.
"""

import torch
import torch.nn as nn
from _derf_inputs import (
    GPT,
    SEED,
    gpt_tokens,
    image_inputs,
    model_input,
    tokens_inputs,
)

from gpt2.model import GPT as GPTModel
from gpt2.model import Dynamic_erf as GPTDerf
from gpt2.model import GPTConfig
from timm.layers import LayerNorm2d
from ViT.dynamic_erf import Dynamic_erf, convert_ln_to_derf

torch.set_num_threads(1)  # the same order of floating-point work on every machine


def t(a):
    return torch.tensor(a)


def grad(p):
    return None if p.grad is None else p.grad.detach().clone()


# --- the ViT module --------------------------------------------------------------


def _run_module(x, alpha, shift, weight, bias, g, channels_last):
    m = Dynamic_erf(weight.shape[0], channels_last)
    with torch.no_grad():
        m.alpha.fill_(float(alpha))
        m.shift.fill_(float(shift))
        m.weight.copy_(t(weight))
        m.bias.copy_(t(bias))
    xt = t(x).requires_grad_(True)
    y = m(xt)
    (y * t(g)).sum().backward()
    return {
        "y": y.detach(),
        "dtype": str(y.dtype),
        "grad_alpha": grad(m.alpha),
        "grad_shift": grad(m.shift),
        "grad_weight": grad(m.weight),
        "grad_bias": grad(m.bias),
        "grad_x": grad(xt),
    }


def case_derf_tokens():
    return _run_module(*tokens_inputs(), channels_last=True)


def case_derf_image():
    return _run_module(*image_inputs(), channels_last=False)


def case_derf_defaults():
    """A freshly built module (alpha 0.5, shift 0, weight 1, bias 0) on tokens."""
    x = t(tokens_inputs()[0])
    m = Dynamic_erf(6, True)
    m2 = Dynamic_erf(4, False, 1.25, -0.3)
    ximg = t(image_inputs()[0])
    with torch.no_grad():
        return {"y": m(x), "y_image": m2(ximg)}


# --- the ViT conversion ------------------------------------------------------------


class Stem(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(3, 4, kernel_size=2, stride=2)
        self.norm = LayerNorm2d(4)

    def forward(self, x):
        return self.norm(self.conv(x))


class Block(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.norm1 = nn.LayerNorm(dim)
        self.fc1 = nn.Linear(dim, 2 * dim)
        self.act = nn.GELU()
        self.fc2 = nn.Linear(2 * dim, dim)
        self.norm2 = nn.LayerNorm(dim, eps=1e-6)
        self.proj = nn.Linear(dim, dim)

    def forward(self, x):
        x = x + self.fc2(self.act(self.fc1(self.norm1(x))))
        return x + self.proj(self.norm2(x))


class TinyViT(nn.Module):
    def __init__(self):
        super().__init__()
        self.stem = Stem()
        self.blocks = nn.ModuleList([Block(4), Block(4)])
        self.norm = nn.LayerNorm(4)
        self.head = nn.Sequential(nn.Linear(4, 3), nn.Tanh())

    def forward(self, x):
        x = self.stem(x)  # (N, 4, 2, 2)
        x = x.flatten(2).transpose(1, 2)  # (N, 4 tokens, 4 channels)
        for blk in self.blocks:
            x = blk(x)
        return self.head(self.norm(x).mean(dim=1))


def _derf_summary(model):
    """Class of every module, and each Derf module's settings and parameters."""
    classes = {name or "<root>": type(m).__name__ for name, m in model.named_modules()}
    derfs = {}
    for name, m in model.named_modules():
        if type(m).__name__ == "Dynamic_erf":
            derfs[name or "<root>"] = {
                "channels_last": getattr(m, "channels_last", None),
                "normalized_shape": list(m.normalized_shape),
                "alpha": m.alpha.detach().clone(),
                "shift": m.shift.detach().clone(),
                "weight": m.weight.detach().clone(),
                "bias": m.bias.detach().clone(),
            }
    params = {k: list(v.shape) for k, v in model.state_dict().items()}
    return {"classes": classes, "derfs": derfs, "params": params}


def case_convert_tree():
    torch.manual_seed(SEED + 41)
    model = TinyViT()
    before = {k: v.detach().clone() for k, v in model.named_parameters()}
    kept = {"stem.conv": model.stem.conv, "blocks.0.fc1": model.blocks[0].fc1,
            "blocks.1.proj": model.blocks[1].proj, "head": model.head}
    converted = convert_ln_to_derf(model, 0.7, 0.1)
    out = _derf_summary(converted)
    out["same_objects"] = {k: dict(converted.named_modules())[k] is v for k, v in kept.items()}
    out["root_is_same"] = converted is model
    after = dict(converted.named_parameters())
    out["other_params_unchanged"] = all(
        torch.equal(after[k], v) for k, v in before.items() if k in after and "norm" not in k
    )
    x = t(model_input(42, (2, 3, 4, 4)))
    y = converted(x)
    (y * t(model_input(43, (2, 3)))).sum().backward()
    out["y"] = y.detach()
    out["grads"] = {
        name: {"alpha": grad(m.alpha), "shift": grad(m.shift), "weight": grad(m.weight)}
        for name, m in converted.named_modules() if type(m).__name__ == "Dynamic_erf"
    }
    return out


def case_convert_defaults():
    """Default initial values; bare norm layers as the root; a model without norms."""
    torch.manual_seed(SEED + 44)
    out = {"tree": _derf_summary(convert_ln_to_derf(TinyViT()))}
    bare = convert_ln_to_derf(nn.LayerNorm((3, 4)), alpha_init_value=0.9)
    out["bare_ln"] = _derf_summary(bare)
    out["bare_ln_y"] = bare(t(model_input(45, (2, 3, 4)))).detach()
    out["bare_ln2d"] = _derf_summary(convert_ln_to_derf(LayerNorm2d(5), shift_init_value=-0.2))
    plain = nn.Sequential(nn.Linear(3, 3), nn.ReLU())
    out["plain_is_same"] = convert_ln_to_derf(plain) is plain
    return out


# --- the language-model module (gpt2/model.py) -------------------------------------


def case_gpt_derf_module():
    """nanoGPT's Dynamic_erf on tokens, with a bias and with the bias removed."""
    x, alpha, shift, weight, bias, g = tokens_inputs()
    out = {}
    for key, with_bias in (("bias", True), ("no_bias", False)):
        m = GPTDerf(6, alpha_init_value=float(alpha), shift_init_value=float(shift))
        with torch.no_grad():
            m.weight.copy_(t(weight))
            m.bias.copy_(t(bias))
        if not with_bias:
            m.bias = None
        xt = t(x).requires_grad_(True)
        y = m(xt)
        (y * t(g)).sum().backward()
        out[key] = {"y": y.detach(), "grad_alpha": grad(m.alpha), "grad_shift": grad(m.shift),
                    "grad_weight": grad(m.weight), "grad_x": grad(xt)}
    return out


# --- nanoGPT with the Derf patch --------------------------------------------------


def _gpt(norm_type):
    torch.manual_seed(SEED + 51)
    cfg = GPTConfig(**GPT)
    cfg.norm_type = norm_type
    model = GPTModel(cfg)
    seen = {}
    model.transformer.h[0].register_forward_pre_hook(lambda m, args: seen.update(x0=args[0].detach().clone()))
    idx, targets = gpt_tokens()
    logits, loss = model(t(idx), t(targets))
    loss.backward()
    norms = {}
    for name, m in model.named_modules():
        if name.endswith(("ln_1", "ln_2", "ln_f")):
            norms[name] = {
                "class": type(m).__name__,
                "alpha": None if not hasattr(m, "alpha") else m.alpha.detach().clone(),
                "shift": None if not hasattr(m, "shift") else m.shift.detach().clone(),
                "grad_alpha": None if not hasattr(m, "alpha") else grad(m.alpha),
                "grad_shift": None if not hasattr(m, "shift") else grad(m.shift),
            }
    return {
        "norms": norms,
        "params": {k: list(v.shape) for k, v in model.state_dict().items()},
        "shared_scale": model.shared_scale.detach().clone(),
        "grad_shared_scale": grad(model.shared_scale),
        "wte": model.transformer.wte.weight.detach().clone(),
        "wpe": model.transformer.wpe.weight.detach().clone(),
        "x0": seen["x0"],
        "logits": logits.detach(),
        "loss": loss.detach(),
    }


def case_gpt_derf():
    return _gpt("derf")


def case_gpt_dyt():
    return _gpt("dyt")


def case_gpt_ln():
    return _gpt("ln")
