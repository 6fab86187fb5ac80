"""Cases for the EBT task: tiny seeded EBT_NLP models driven on CPU in float64."""
import random

import torch
from torch import nn

from ebt_inputs import BATCH, DIM, SEQ, hparams, seed, toy_start, toy_target, token_batch
from model.nlp.ebt import EBT_NLP
from model.replay_buffer import CausalReplayBuffer

torch.set_num_threads(1)
torch.set_default_dtype(torch.float64)


def _model(offset=0, **overrides):
    torch.manual_seed(seed() + 101 + offset)
    return EBT_NLP(hparams(**overrides))


def _ids(offset=0):
    return torch.as_tensor(token_batch(offset))


def _forward(model, ids, **kwargs):
    dists, energies = model(ids, **kwargs)
    return {
        "distributions": torch.stack([d.reshape(ids.shape[0], ids.shape[1], -1) for d in dists]).detach(),
        "energies": torch.stack([e.reshape(ids.shape[0], ids.shape[1]) for e in energies]).detach(),
    }


def _run(offset, forward_kwargs, **overrides):
    model = _model(offset, **overrides)
    ids = _ids(offset)[:, :-1]
    torch.manual_seed(seed() + 202 + offset)
    return _forward(model, ids, **forward_kwargs)


def case_forward_default():
    return _run(0, dict(learning=False))


def case_forward_log_probs():
    return _run(1, dict(learning=False, return_raw_logits=False))


def case_forward_clamps():
    return _run(2, dict(learning=False, return_raw_logits=True), clamp_futures_grad=True,
                clamp_futures_grad_max_change=0.05, absolute_clamp=0.4, sharpen_predicted_distribution=0.8,
                truncate_mcmc=True)


def case_forward_prob_dist_embed():
    return _run(3, dict(learning=False, return_raw_logits=True), vocab_to_embed_uses_prob_dist=True,
                normalize_initial_condition_only_first_step=True, mcmc_step_size=40.0)


def case_forward_unnormalised():
    return _run(4, dict(learning=False, return_raw_logits=True), normalize_initial_condition=False,
                mcmc_step_size=0.5)


def case_forward_langevin():
    return _run(5, dict(learning=False, return_raw_logits=True), langevin_dynamics_noise=0.3)


def case_forward_random_steps():
    out = {}
    for name, extra in [("all", {}), ("final", dict(randomize_mcmc_num_steps_final_landscape=True))]:
        kw = dict(randomize_mcmc_num_steps=2, randomize_mcmc_num_steps_min=0, randomize_mcmc_step_size_scale=2.0, **extra)
        out[name + "_train"] = _run(6, dict(learning=False, return_raw_logits=True, no_randomness=False), **kw)
        out[name + "_eval"] = _run(6, dict(learning=False, return_raw_logits=True, no_randomness=True), **kw)
    return out


def _grads(model, loss):
    loss.backward()
    return {
        "alpha": model.alpha.grad.detach().clone() if model.alpha.grad is not None else None,
        "final_layer": None if model.transformer.final_layer.weight.grad is None else model.transformer.final_layer.weight.grad.detach().clone(),
        "embeddings": None if model.embeddings.weight.grad is None else model.embeddings.weight.grad.detach().clone(),
    }


def case_loss_and_grads():
    out = {}
    for name, overrides in [("full", {}), ("truncated", dict(truncate_mcmc=True)),
                            ("smoothed", dict(soften_target_prob_dist=0.3)),
                            ("coeff", dict(reconstruction_coeff=0.5, mcmc_num_steps=4))]:
        model = _model(7, **overrides)
        batch = {"input_ids": _ids(7).unsqueeze(1)}
        torch.manual_seed(seed() + 303)
        log = model.forward_loss_wrapper(batch, phase="val")
        res = {k: (v.detach() if torch.is_tensor(v) else v) for k, v in log.items()}
        res["grads"] = _grads(model, log["loss"])
        torch.manual_seed(seed() + 303)
        res["forward"] = _forward(model, _ids(7)[:, :-1], learning=False, return_raw_logits=True)
        out[name] = res
    return out


def case_inference_grads():
    model = _model(8)
    ids = _ids(8)[:, :-1]
    torch.manual_seed(seed() + 404)
    dists, _ = model(ids, learning=False, return_raw_logits=True)
    torch.log_softmax(dists[-1], -1).sum().backward()
    return {"final_layer_grad_is_none": model.transformer.final_layer.weight.grad is None,
            "alpha_grad": model.alpha.grad.detach().clone()}


class ToyEnergy(nn.Module):
    """A convex energy 0.5 * ||y - t||^2 per position of the predicted half."""

    def __init__(self, target):
        super().__init__()
        self.target = target
        self.calls = []

    def forward(self, embeddings, start_pos, mcmc_step=None):
        self.calls.append(mcmc_step)
        pred = embeddings[:, embeddings.shape[1] // 2:]
        return (0.5 * ((pred - self.target) ** 2).sum(-1)).unsqueeze(-1)


def _toy_model(offset=0, **overrides):
    torch.manual_seed(seed() + 505 + offset)
    model = EBT_NLP(hparams(tokenizer=f"tiny-{DIM}", normalize_initial_condition=False,
                            denoising_initial_condition="zeros", **overrides))
    with torch.no_grad():
        model.vocab_to_embed.weight.copy_(torch.eye(DIM))
    model.transformer = ToyEnergy(torch.as_tensor(toy_target(DIM, offset)))
    start = torch.as_tensor(toy_start(DIM, offset))
    model.corrupt_embeddings = lambda embeddings: start.repeat(embeddings.shape[0] // BATCH, 1, 1).clone()
    return model


def case_toy_descent():
    out = {}
    for name, offset, overrides in [("small", 0, dict(mcmc_step_size=0.3, mcmc_num_steps=4)),
                                    ("big", 1, dict(mcmc_step_size=1.5, mcmc_num_steps=3)),
                                    ("tiny_alpha", 2, dict(mcmc_step_size=-1.0, mcmc_num_steps=2)),
                                    ("clamped", 3, dict(mcmc_step_size=0.5, mcmc_num_steps=3, clamp_futures_grad=True,
                                                        clamp_futures_grad_max_change=0.2)),
                                    ("abs_clamp", 4, dict(mcmc_step_size=0.25, mcmc_num_steps=2, absolute_clamp=1.0))]:
        model = _toy_model(offset, **overrides)
        ids = torch.ones((BATCH, SEQ), dtype=torch.long)
        res = _forward(model, ids, learning=False, return_raw_logits=True)
        res["calls"] = model.transformer.calls
        out[name] = res
    return out


def case_toy_extra_steps():
    model = _toy_model(5, mcmc_step_size=0.2, mcmc_num_steps=3, randomize_mcmc_num_steps=2)
    ids = torch.ones((BATCH, SEQ), dtype=torch.long)
    res = _forward(model, ids, learning=False, return_raw_logits=True, no_randomness=True)
    res["calls"] = model.transformer.calls
    return res


def _infer(model, ids):
    final, energies, dists = model.ebt_advanced_inference(ids, learning=False)
    return {"final": final.detach(), "energies": torch.stack([e.reshape(ids.shape[0], -1) if e.numel() == ids.numel() else e.reshape(-1, ids.shape[1]) for e in energies]).detach(),
            "states": torch.stack([d.detach() for d in dists]), "calls": model.transformer.calls}


def case_toy_inference():
    out = {}
    ids = torch.ones((BATCH, SEQ), dtype=torch.long)
    for name, offset, overrides in [("plain", 0, dict(mcmc_step_size=0.3, mcmc_num_steps=2, infer_ebt_num_steps=4)),
                                    ("override_scale", 1, dict(mcmc_step_size=0.6, mcmc_num_steps=3, infer_ebt_override_alpha=0.5)),
                                    ("override_value", 2, dict(mcmc_step_size=0.1, mcmc_num_steps=2, infer_ebt_override_alpha=1.5)),
                                    ("accept_diverging", 3, dict(mcmc_step_size=2.5, mcmc_num_steps=3, infer_accept_lower_energies=True)),
                                    ("accept_converging", 4, dict(mcmc_step_size=0.4, mcmc_num_steps=2, infer_accept_lower_energies=True)),
                                    ("clamped", 5, dict(mcmc_step_size=0.5, mcmc_num_steps=3, clamp_futures_grad=True, clamp_futures_grad_max_change=0.3))]:
        model = _toy_model(offset, **overrides)
        out[name] = _infer(model, ids)
    return out


def case_best_of_samples():
    out = {}
    for technique in ["min", "max", "max_gap"]:
        torch.manual_seed(seed() + 606)
        model = EBT_NLP(hparams(mcmc_num_steps=2, infer_generated_samples=3, infer_energy_sampling_technique=technique,
                                infer_langevin_dynamics_noise=0.2, mcmc_step_size=20.0))
        ids = _ids(9)[:, :-1]
        torch.manual_seed(seed() + 707)
        final, energies, dists = model.ebt_advanced_inference(ids, learning=False)
        out[technique] = {"final": final.detach(), "energies": torch.stack([e.reshape(-1, ids.shape[1]) for e in energies]).detach(),
                          "states": torch.stack([d.detach() for d in dists])}
    return out


def case_langevin_inference():
    out = {}
    for name, first in [("every_step", False), ("first_step", True)]:
        torch.manual_seed(seed() + 808)
        model = EBT_NLP(hparams(mcmc_num_steps=3, infer_langevin_dynamics_noise=0.5, infer_langevin_first_step=first,
                                mcmc_step_size=20.0))
        ids = _ids(10)[:, :-1]
        torch.manual_seed(seed() + 909)
        final, energies, dists = model.ebt_advanced_inference(ids, learning=False)
        out[name] = {"final": final.detach(), "energies": torch.stack([e.reshape(-1) for e in energies]).detach()}
    return out


def case_replay_buffer():
    random.seed(seed() + 1)
    torch.manual_seed(seed() + 2)
    buffer = CausalReplayBuffer(max_size=3, sample_size=2.0)
    out = {}
    first = torch.as_tensor(token_batch(20))
    out["empty"] = list(buffer.get_batch(first))
    buffer.update(first, torch.randn(first.shape[0], SEQ, 4))
    out["one_batch"] = list(buffer.get_batch(torch.as_tensor(token_batch(21))))
    second = torch.as_tensor(token_batch(22, batch=3))
    buffer.update(second, torch.randn(second.shape[0], SEQ, 4))
    out["size"] = len(buffer.buffer)
    out["kept"] = torch.cat([r["all_data"] for r in buffer.buffer])
    out["kept_pred"] = torch.cat([r["predicted_outputs"] for r in buffer.buffer])
    out["full"] = list(buffer.get_batch(torch.as_tensor(token_batch(23))))
    return out


def case_inference_variants():
    torch.manual_seed(seed() + 1010)
    model = EBT_NLP(hparams(mcmc_num_steps=3, vocab_to_embed_uses_prob_dist=True, normalize_initial_condition_only_first_step=True,
                            langevin_dynamics_noise=0.3, infer_langevin_dynamics_noise=0.0, mcmc_step_size=30.0))
    ids = _ids(11)[:, :-1]
    torch.manual_seed(seed() + 1111)
    final, energies, dists = model.ebt_advanced_inference(ids, learning=False)
    return {"final": final.detach(), "energies": torch.stack([e.reshape(-1) for e in energies]).detach(),
            "states": torch.stack([d.detach() for d in dists])}

