"""Cases for the TRM task: tiny TRM models (hidden 32, 2 heads, 2 layers, 8 tokens after a
2-position puzzle prefix, vocabulary 10) on CPU in float32, their weights set by name from
the seed (inputs/trm_inputs.py)."""
import torch

import trm_inputs as I
from models.losses import ACTLossHead
from models.layers import RotaryEmbedding
from models.recursive_reasoning.trm import (
    TinyRecursiveReasoningModel_ACTV1,
    TinyRecursiveReasoningModel_ACTV1_Inner,
    TinyRecursiveReasoningModel_ACTV1Block,
    TinyRecursiveReasoningModel_ACTV1Carry,
    TinyRecursiveReasoningModel_ACTV1Config,
    TinyRecursiveReasoningModel_ACTV1InnerCarry,
)

torch.set_num_threads(1)


def _load(module, offset):
    with torch.no_grad():
        for name, t in module.state_dict().items():
            if t.is_floating_point():
                t.copy_(torch.from_numpy(I.weight(name, tuple(t.shape), offset)))
    return module


def _np(t):
    return None if t is None else t.detach().numpy().copy()


def _batch(offset):
    return {k: torch.from_numpy(v) for k, v in I.batch(offset).items()}


# ---------------------------------------------------------------- one block

def _block(offset, **overrides):
    cfg = TinyRecursiveReasoningModel_ACTV1Config(**I.config(**overrides))
    block = _load(TinyRecursiveReasoningModel_ACTV1Block(cfg), offset)
    rope = RotaryEmbedding(dim=I.HIDDEN // I.HEADS, max_position_embeddings=I.SEQ + I.PREFIX, base=10000.0)
    x = torch.from_numpy(I.hidden(offset)).requires_grad_(True)
    y = block(cos_sin=rope(), hidden_states=x)
    # the same input with one position changed: which output positions move
    x2 = x.detach().clone()
    x2[:, 3] += 1.0
    y2 = block(cos_sin=rope(), hidden_states=x2)
    (y * torch.from_numpy(I.hidden(offset + 100))).sum().backward()
    return {"out": _np(y), "moved": _np((y2 - y).abs().amax(-1)), "grad_in": _np(x.grad),
            "param_grad_norms": {n: float(p.grad.norm()) if p.grad is not None else 0.0
                                 for n, p in block.named_parameters()}}


def case_block_attention():
    return _block(0)


def case_block_mlp_t():
    return _block(1, mlp_t=True)


# ---------------------------------------------------------------- inner model: deep recursion

def _inner(offset, **overrides):
    model = _load(TinyRecursiveReasoningModel_ACTV1_Inner(TinyRecursiveReasoningModel_ACTV1Config(**I.config(**overrides))), offset)
    model.train()
    z_H, z_L = (torch.from_numpy(z).requires_grad_(True) for z in I.carry(offset))
    batch = _batch(offset)
    carry, logits, (q_halt, q_cont) = model(TinyRecursiveReasoningModel_ACTV1InnerCarry(z_H=z_H, z_L=z_L), batch)
    r = torch.from_numpy(I.hidden(offset + 200, I.SEQ)[..., :I.VOCAB])
    loss = (logits * r).sum() + (q_halt * torch.arange(1.0, I.BATCH + 1)).sum() - q_cont.sum()
    loss.backward()
    grads = {n: _np(p.grad) for n, p in model.named_parameters()}
    grads["puzzle_emb.local_weights"] = _np(model.puzzle_emb.local_weights.grad)
    out = {"z_H": _np(carry.z_H), "z_L": _np(carry.z_L), "carry_requires_grad": [carry.z_H.requires_grad, carry.z_L.requires_grad],
           "logits": _np(logits), "q_halt": _np(q_halt), "q_continue": _np(q_cont),
           "grad_z_H": _np(z_H.grad), "grad_z_L": _np(z_L.grad), "grads": grads}
    # H_cycles passes of one cycle each, the carry handed on: the same states
    if overrides.get("H_cycles", 3) > 1:
        one = TinyRecursiveReasoningModel_ACTV1Config(**I.config(**dict(overrides, H_cycles=1)))
        single = _load(TinyRecursiveReasoningModel_ACTV1_Inner(one), offset)
        c = TinyRecursiveReasoningModel_ACTV1InnerCarry(*(torch.from_numpy(z) for z in I.carry(offset)))
        with torch.no_grad():
            for _ in range(overrides.get("H_cycles", 3)):
                c, logits1, (q1, _q) = single(c, batch)
        out["chained"] = {"z_H": _np(c.z_H), "z_L": _np(c.z_L), "logits": _np(logits1), "q_halt": _np(q1)}
    return out


def case_inner_rope():
    return _inner(2)


def case_inner_single_cycle():
    return _inner(3, H_cycles=1, L_cycles=3)


def case_inner_learned_pos():
    return _inner(4, pos_encodings="learned", H_cycles=2, L_cycles=3, L_layers=1)


def case_inner_mlp_t():
    return _inner(5, mlp_t=True, H_cycles=3, L_cycles=1)


# ---------------------------------------------------------------- ACT loop with the loss head

def _act(offset, steps=7, train=True, **overrides):
    model = _load(TinyRecursiveReasoningModel_ACTV1(I.config(**overrides)), offset)
    head = ACTLossHead(model, "stablemax_cross_entropy")
    head.train(train)
    torch.manual_seed(I.seed() + offset)
    carry = head.initial_carry(_batch(offset))
    record = []
    for step in range(steps):
        batch = _batch(offset * 100 + step)
        carry, loss, metrics, outs, all_halted = head(return_keys=["logits", "q_halt_logits"], carry=carry, batch=batch)
        model.zero_grad()
        loss.backward()
        record.append({
            "loss": float(loss.detach()), "all_halted": bool(all_halted),
            "steps": _np(carry.steps), "halted": _np(carry.halted),
            "data": {k: _np(v) for k, v in carry.current_data.items()},
            "z_H": _np(carry.inner_carry.z_H), "z_L": _np(carry.inner_carry.z_L),
            "outputs": {k: _np(v) for k, v in outs.items()},
            "metrics": {k: float(metrics[k]) for k in ["count", "accuracy", "exact_accuracy", "q_halt_accuracy", "steps"]},
            "grads": {n: _np(p.grad) for n, p in model.named_parameters() if p.grad is not None},
        })
    return record


def case_act_train():
    return _act(6)


def case_act_train_mlp_t():
    return _act(7, mlp_t=True, L_cycles=1, halt_max_steps=3)


def case_act_explore():
    return _act(8, steps=10, halt_exploration_prob=1.0, halt_max_steps=5)


def case_act_explore_short():
    return _act(12, steps=4, halt_exploration_prob=1.0, halt_max_steps=2)


def case_act_eval():
    return _act(9, steps=6, train=False)


def case_act_single_step():
    return _act(10, steps=3, halt_max_steps=1)


# ---------------------------------------------------------------- the loss head on given outputs

class _Stub(torch.nn.Module):
    def __init__(self, given, with_target):
        super().__init__()
        self.given, self.with_target = given, with_target

    def forward(self, carry, batch):
        g = self.given
        outputs = {k: g[k] for k in ["logits", "q_halt_logits", "q_continue_logits"]}
        if self.with_target:
            outputs["target_q_continue"] = g["target_q_continue"]
        data = dict(batch, labels=g["labels"])
        return TinyRecursiveReasoningModel_ACTV1Carry(None, g["steps"], g["halted"], data), outputs


def _loss(offset, with_target):
    raw = I.stub_outputs(offset)
    given = {k: torch.from_numpy(v) for k, v in raw.items()}
    for k in ["logits", "q_halt_logits", "q_continue_logits"]:
        given[k].requires_grad_(True)
    head = ACTLossHead(_Stub(given, with_target), "stablemax_cross_entropy")
    carry, loss, metrics, outs, all_halted = head(return_keys=["logits", "q_halt_logits", "preds"], carry=None, batch={})
    loss.backward()
    return {"loss": float(loss.detach()), "all_halted": bool(all_halted), "halted": _np(carry.halted),
            "metrics": {k: float(metrics[k]) for k in ["count", "accuracy", "exact_accuracy", "q_halt_accuracy", "steps"]},
            "outputs": {k: _np(v) for k, v in outs.items()},
            "outputs_require_grad": [bool(v.requires_grad) for v in outs.values()],
            "grads": {k: _np(given[k].grad) for k in ["logits", "q_halt_logits", "q_continue_logits"]}}


def case_loss():
    return _loss(0, False)


def case_loss_with_target():
    return _loss(1, True)
