"""Cases for CrystaLLM-pi's property conditioning: the prefix-attention (PKV) encoder and
model, and the residual-attention (Slider) encoder, attention layer and model, on tiny
GPT-2 configurations (transformers 4.48, float32, CPU, one thread, dropout 0, eval mode).

The conditioning encoders' parameters, the property vectors, the query projection and the
slider keys/values come from inputs/_crystallm_inputs.py (numpy, seeded with RCB_SEED), so
that the checks recompute them in closed form; the GPT-2 weights come from torch's own
initialisation under the same seed and are compared with the reference's outputs and
with transformers' plain GPT2LMHeadModel holding the same weights.
"""

import os

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_VERBOSITY", "error")

import numpy as np  # noqa: E402
import torch  # noqa: E402
from transformers import GPT2LMHeadModel  # noqa: E402

from _crystallm_inputs import (  # noqa: E402
    ATT, MISSING, PKV_ENCODERS, PKV_MODEL, SEED, SLIDER_ENCODERS, SLIDER_MODEL,
    pkv_encoder_params, pkv_model_conditions, pkv_model_tokens, slider_attention_inputs, slider_encoder_params,
    slider_model_inputs,
)
from _models.PKV_model import PKVEncoder, PKVGPT, PKVGPT2Config  # noqa: E402
from _models.Slider_model import (  # noqa: E402
    SliderAttention, SliderEncoder, SliderGPT, SliderGPT2Config,
)

torch.set_num_threads(1)  # the same order of floating-point work on every machine

NO_DROPOUT = dict(resid_pdrop=0.0, embd_pdrop=0.0, attn_pdrop=0.0)


def out(x):
    return x.detach().cpu().numpy()


def load(module, params):
    state = module.state_dict()  # keeps the buffers (SliderEncoder's empty `dummy`)
    assert set(params) <= set(state)
    state.update({k: torch.tensor(v) for k, v in params.items()})
    module.load_state_dict(state, strict=True)


def pkv_config(c, **extra):
    return PKVGPT2Config(
        n_input_vector=c["n_input_vector"], n_prefix_tokens=c["n_prefix_tokens"],
        n_hidden_cond=c["n_hidden_cond"], dropout=0.0, share_layers=c["share_layers"],
        n_layer=c["n_layer"], n_head=c["n_head"], n_embd=c["n_embd"], **NO_DROPOUT, **extra,
    )


# ---- prefix attention: the encoder ------------------------------------------------------


def case_pkv_encoder():
    """Per layer: (k, v), each (batch, n_head, n_prefix_tokens, head_dim), for both
    encoder configurations."""
    result = {}
    for name, c in PKV_ENCODERS.items():
        params, cond = pkv_encoder_params(name)
        enc = PKVEncoder(pkv_config(c)).eval()
        load(enc, params)
        with torch.no_grad():
            pkv = enc(torch.tensor(cond))
        result[name] = [[out(k), out(v)] for k, v in pkv]
    return result


# ---- prefix attention: the model --------------------------------------------------------


def pkv_model():
    c = PKV_ENCODERS["per_layer"]
    torch.manual_seed(SEED + 31)
    model = PKVGPT(pkv_config(c, vocab_size=PKV_MODEL["vocab_size"], n_positions=PKV_MODEL["n_positions"])).eval()
    params, _ = pkv_encoder_params("per_layer")
    load(model.conditioning, params)
    return model, torch.tensor(pkv_model_conditions())


def case_pkv_model():
    """Logits (5, 6, 40) with an all-ones mask, with no mask and with a padded mask; the
    cache each returns (per layer: keys, values); row 0 run alone; and an incremental
    step (the last token fed with the cache of the first five)."""
    model, cond = pkv_model()
    ids, padded = pkv_model_tokens()
    ids = torch.tensor(ids)
    ones = torch.ones_like(ids)
    with torch.no_grad():
        full = model(input_ids=ids, attention_mask=ones, condition_values=cond, use_cache=True)
        nomask = model(input_ids=ids, condition_values=cond)
        pad = model(input_ids=ids, attention_mask=torch.tensor(padded), condition_values=cond)
        alone = model(input_ids=ids[:1], attention_mask=ones[:1], condition_values=cond[:1])
        head = model(input_ids=ids[:, :-1], condition_values=cond, use_cache=True)
        step = model(input_ids=ids[:, -1:], past_key_values=head.past_key_values)
    return {
        "ones": out(full.logits),
        "cache": [[out(k), out(v)] for k, v in full.past_key_values],
        "no_mask": out(nomask.logits),
        "padded": out(pad.logits),
        "row0_alone": out(alone.logits),
        "step": out(step.logits),
    }


# ---- residual attention: the encoder ----------------------------------------------------


def slider_config(c, **extra):
    return SliderGPT2Config(
        slider_on=True, slider_n_variables=c["n_variables"], slider_n_hidden=c["n_hidden"],
        slider_n_heads_sharing_slider=c["sharing"], slider_dropout=0.0,
        n_head=c["n_head"], n_embd=c["n_embd"], **NO_DROPOUT, **extra,
    )


def case_slider_encoder():
    """Keys and values (batch, n_head, n_variables, head_dim), the factor and the presence
    mask, for both encoder configurations."""
    result = {}
    for name, c in SLIDER_ENCODERS.items():
        params, cond = slider_encoder_params(name)
        enc = SliderEncoder(slider_config(c)).eval()
        load(enc, params)
        with torch.no_grad():
            k, v, factor, mask = enc(torch.tensor(cond))
        result[name] = {"keys": out(k), "values": out(v), "factor": float(factor.detach()), "mask": out(mask)}
    return result


# ---- residual attention: the attention layer --------------------------------------------


def case_slider_attention():
    """The layer's output (3, 5, 24) with the slider keys/values at factors 0.7, -1.3 and
    0, and with no slider input at all."""
    w, b, hidden, keys, values, mask = slider_attention_inputs()
    c = dict(n_head=ATT["n_head"], n_embd=ATT["n_embd"], n_variables=ATT["n_variables"], n_hidden=8, sharing=1)
    cfg = slider_config(c, n_layer=1)
    torch.manual_seed(SEED + 41)
    attn = SliderAttention(cfg, layer_idx=0).eval()
    with torch.no_grad():
        attn.c_attn.weight.copy_(torch.tensor(w))
        attn.c_attn.bias.copy_(torch.tensor(b))
    h, k, v, m = (torch.tensor(x) for x in (hidden, keys, values, mask))
    result = {}
    with torch.no_grad():
        for name, f in (("f07", 0.7), ("fm13", -1.3), ("f0", 0.0)):
            result[name] = out(attn(h, slider_key_value_factor_mask=(k, v, torch.tensor(f), m))[0])
        result["none"] = out(attn(h)[0])
    return result


# ---- residual attention: the model ------------------------------------------------------


def slider_model(n_variables=None):
    s = SLIDER_MODEL
    c = dict(s, n_variables=n_variables or s["n_variables"])
    cfg = slider_config(c, n_layer=s["n_layer"], vocab_size=s["vocab_size"], n_positions=s["n_positions"])
    return SliderGPT(cfg).eval()


def seeded_slider_model():
    torch.manual_seed(SEED + 51)
    model = slider_model()
    with torch.no_grad():
        for i, block in enumerate(model.transformer.h):
            for lin in (block.slider.encode_linear, block.slider.upscale_linear, block.slider.downscale_linear):
                lin.weight.normal_(0.0, 1.0 / np.sqrt(lin.weight.shape[1]))
                lin.bias.normal_(0.0, 0.3)
            block.slider.attention_factor.weight.fill_(0.8 - 1.5 * i)
    return model


def drop_variable(model, keep):
    """A model with only the variables ``keep``: each variable's slice of the encoder."""
    small = slider_model(len(keep))
    state = model.state_dict()
    n = model.config.slider_n_variables
    for key, value in list(state.items()):
        if ".slider." in key and "attention_factor" not in key:
            parts = value.reshape(n, -1, *value.shape[1:])
            state[key] = parts[list(keep)].reshape(-1, *value.shape[1:])
    small.load_state_dict(state, strict=True)
    return small


def case_slider_model():
    """Logits (3, 6, 40): with the property vectors (row 1 lacks variable 1, row 2 all),
    with every variable missing, with none given, with transformers' GPT-2 holding the
    same weights, with the slider factors set to 0, with variable 1 removed from the
    model, and the last token fed incrementally with the cache."""
    model = seeded_slider_model()
    ids, cond = slider_model_inputs()
    ids, cond = torch.tensor(ids), torch.tensor(cond)
    ones = torch.ones_like(ids)
    gpt2 = GPT2LMHeadModel(model.config).eval()
    missing_keys, _ = gpt2.load_state_dict(model.state_dict(), strict=False)
    assert not missing_keys
    with torch.no_grad():
        result = {
            "cond": out(model(input_ids=ids, attention_mask=ones, condition_values=cond).logits),
            "all_missing": out(model(input_ids=ids, attention_mask=ones,
                                     condition_values=torch.full_like(cond, MISSING)).logits),
            "none": out(model(input_ids=ids, attention_mask=ones).logits),
            "gpt2": out(gpt2(input_ids=ids, attention_mask=ones).logits),
        }
        small = drop_variable(model, [0, 2])
        result["dropped"] = out(small(input_ids=ids, attention_mask=ones, condition_values=cond[:, [0, 2]]).logits)
        head = model(input_ids=ids[:, :-1], condition_values=cond, use_cache=True)
        result["step"] = out(model(input_ids=ids[:, -1:], past_key_values=head.past_key_values,
                                   condition_values=cond, use_cache=True).logits)
        for block in model.transformer.h:
            block.slider.attention_factor.weight.fill_(0.0)
        result["zero_factor"] = out(model(input_ids=ids, attention_mask=ones, condition_values=cond).logits)
    return result
