"""Cases for RAE (arXiv 2510.11690): the authors' RAE (with a tiny random stand-in for
the frozen DINOv2 encoder and a tiny ViT-MAE decoder), the shifted timestep sampling of
their Transport, the shifted time grid of their ODE sampler, and the DiT^DH
forward on a tiny configuration. No assertion and no expected value here."""

import os
import tempfile

import numpy as np
import torch

import _rae_inputs as I
import stage1.encoders.standin  # noqa: F401  registers TinyStandInEncoder
import stage1.rae as rae_module
from stage2.models.DDT import DiTwDDTHead
from stage2.transport import ModelType, PathType, Sampler, Transport, WeightType, create_transport
from stage2.transport.integrators import ode

torch.set_num_threads(1)


class _StandInProcessor:
    image_mean = I.IMAGE_MEAN
    image_std = I.IMAGE_STD


class _StandInAutoImageProcessor:
    # the DINOv2 image processor needs PIL; only its mean and std are read
    @staticmethod
    def from_pretrained(path):
        return _StandInProcessor()


rae_module.AutoImageProcessor = _StandInAutoImageProcessor


def t(a):
    return torch.from_numpy(np.asarray(a))


def make_rae(stats=None, reshape_to_2d=True, noise_tau=I.NOISE_TAU):
    torch.manual_seed(1234)
    path = None
    if stats is not None:
        path = os.path.join(tempfile.mkdtemp(), "stats.pt")
        torch.save({"mean": t(stats[0]), "var": t(stats[1])}, path)
    m = rae_module.RAE(
        encoder_cls="TinyStandInEncoder",
        encoder_config_path=str(I.CONFIGS / "encoder"),
        encoder_input_size=I.INPUT_SIZE,
        encoder_params={"patch_size": I.PATCH, "hidden_size": I.HIDDEN, "seed": 3},
        decoder_config_path=str(I.CONFIGS / "decoder"),
        decoder_patch_size=4,
        noise_tau=noise_tau,
        reshape_to_2d=reshape_to_2d,
        normalization_stat_path=path,
        eps=I.EPS,
    )
    with torch.no_grad():
        g = torch.Generator().manual_seed(77)
        for p in m.decoder.parameters():
            if p.requires_grad:
                p.copy_(torch.randn(p.shape, generator=g) * 0.2)
    return m.eval()


def case_encode():
    imgs, stats = I.images(), I.latent_stats()
    plain, normed, tokens = make_rae(), make_rae(stats), make_rae(reshape_to_2d=False)
    out = {}
    for key, x in imgs.items():
        x = t(x)
        out[key] = {
            "plain": plain.encode(x),
            "normalized": normed.encode(x),
            "tokens": tokens.encode(x),
        }
    x = t(imgs["native"])
    mean, std = torch.tensor(I.IMAGE_MEAN).view(1, 3, 1, 1), torch.tensor(I.IMAGE_STD).view(1, 3, 1, 1)
    with torch.no_grad():
        out["encoder_on_standardized"] = plain.encoder((x - mean) / std)
    return out


def case_noising():
    m, train, tau0 = make_rae(), make_rae(reshape_to_2d=False).train(), make_rae(noise_tau=0.0).train()
    torch.manual_seed(I.seed() + 5)
    direct = m.noising(torch.zeros(I.NOISE_SHAPE))
    x = t(I.images()["native"]).repeat(64, 1, 1, 1)
    return {
        "direct": direct,
        "train_minus_eval": train.encode(x) - train.eval().encode(x),
        "eval_twice": m.encode(x[:2]) - m.encode(x[:2]),
        "tau_zero_train": tau0.encode(x[:2]) - m.encode(x[:2]),
    }


def case_decode():
    z, stats = t(I.latents()), I.latent_stats()
    plain, normed, tokens = make_rae(), make_rae(stats), make_rae(reshape_to_2d=False)
    zn = (z - t(stats[0])) / torch.sqrt(t(stats[1]) + I.EPS)
    with torch.no_grad():
        return {
            "plain": plain.decode(z),
            "normalized": normed.decode(zn),
            "tokens": tokens.decode(z.flatten(2).transpose(1, 2).contiguous()),
            "roundtrip_plain": plain(t(I.images()["native"])),
        }


def case_training_timesteps():
    torch.manual_seed(I.seed() + 23)
    x1 = torch.randn(I.N_T, 2, dtype=torch.float64)
    out = {}
    for name, dist, shift in [("uniform_shifted", "uniform", I.ALPHA), ("uniform_plain", "uniform", 1.0),
                              ("logitnormal_shifted", "logit-normal_0.0_1.0", I.ALPHA)]:
        tr = create_transport("Linear", "velocity", time_dist_type=dist, time_dist_shift=shift)
        tt, x0, x1_out = tr.sample(x1)
        out[name] = {"t": tt, "x0": x0, "x1_unchanged": bool(torch.equal(x1_out, x1)),
                     "t_dtype": str(tt.dtype), "x0_shape": list(x0.shape)}
    tr = Transport(model_type=ModelType.NOISE, path_type=PathType.LINEAR, loss_type=WeightType.NONE,
                   time_dist_type="uniform", time_dist_shift=I.ALPHA, train_eps=I.TRAIN_EPS,
                   sample_eps=I.SAMPLE_EPS)
    out["noise_model_eps"] = {"t": tr.sample(x1)[0]}
    return out


def case_time_grids():
    out = {}
    for shift in (1.0, I.ALPHA):
        o = ode(lambda x, tt, model: torch.ones_like(x), t0=0.0, t1=0.999, sampler_type="euler",
                num_steps=I.GRID_STEPS, atol=1e-6, rtol=1e-3, time_dist_shift=shift)
        x = torch.zeros(3, 2)
        key = "plain" if shift == 1.0 else "shifted"
        out[key] = {
            "ode_t": o.t, "ode_last": o.sample(x, None)[-1],
        }
    o = ode(lambda x, tt, model: torch.ones_like(x), t0=0.1, t1=0.9, sampler_type="heun",
            num_steps=5, atol=1e-6, rtol=1e-3, time_dist_shift=2.0)
    out["other_interval"] = {"t": o.t, "last": o.sample(torch.zeros(2), None)[-1]}
    # the full ODE sampler on the transport: dx/dt = t (per sample), Euler on the shifted grid
    tr = create_transport("Linear", "velocity", time_dist_shift=I.ALPHA)
    sample = Sampler(tr).sample_ode(sampling_method="euler", num_steps=I.GRID_STEPS)
    out["sampler_ode_last"] = sample(torch.zeros(2, 3), lambda x, tt: tt.view(-1, 1).expand_as(x))[-1]
    return out


def make_ddt(randomize=True, **kw):
    torch.manual_seed(4321)
    m = DiTwDDTHead(**{**I.DDT_KW, **kw})
    if randomize:
        g = torch.Generator().manual_seed(99)
        with torch.no_grad():
            for p in m.parameters():
                if p.requires_grad:
                    p.copy_(torch.randn(p.shape, generator=g) * 0.3)
    return m.eval()


def case_ddt_forward():
    d = I.ddt_inputs()
    x, tt, y, s = t(d["x"]), t(d["t"]), t(d["y"]), t(d["s"])
    m = make_ddt()
    with torch.no_grad():
        return {
            "out": m(x, tt, y),
            "out_given_s": m(x, tt, y, s=s),
            "out_given_s_other_ty": m(x, t(d["t2"]), t(d["y2"]), s=s),
            "out_layernorm_gelu": make_ddt(use_rmsnorm=False, use_swiglu=False, use_rope=True)(x, tt, y),
            "out_at_init": make_ddt(randomize=False)(x, tt, y),
        }
