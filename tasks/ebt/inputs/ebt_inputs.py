"""Seeded tiny EBT models and inputs shared by the cases and the checks."""
import os

import numpy as np

VOCAB = 12
DIM = 16
SEQ = 5
BATCH = 2


def seed():
    return int(os.environ.get("RCB_SEED", "0"))


def hparams(**overrides):
    """The minimal training loop's EBT settings (example_code/minimal_nlp_training_loop.py)
    at a tiny size: a vocabulary of VOCAB, width DIM, one block, two heads."""
    h = dict(
        batch_size_per_device=BATCH, context_length=SEQ + 1, tokenizer=f"tiny-{VOCAB}",
        embedding_dim=DIM, num_transformer_blocks=1, multiheaded_attention_heads=2,
        ffn_dim_multiplier=1, weight_initialization_method="xavier", weight_initialization_gain=1.0,
        execution_mode="pretrain", debug_unused_parameters=False,
        mcmc_step_size=5.0, mcmc_step_size_lr_multiplier=15.0, mcmc_num_steps=3,
        ebt_type="default", normalize_initial_condition=True,
        denoising_initial_condition="random_noise", mcmc_step_size_learnable=True,
        no_mcmc_detach=False, ebt_norm="rms", ebt_act_func="silu", dyt_alpha_init=0.5,
        mcmc_replay_buffer=False, gaussian_random_noise_scaling=1.0,
        normalize_initial_condition_only_first_step=False, randomize_mcmc_step_size_scale=1.0,
        randomize_mcmc_num_steps=0, randomize_mcmc_num_steps_min=0,
        randomize_mcmc_num_steps_final_landscape=False, langevin_dynamics_noise=0.0,
        langevin_dynamics_noise_learnable=False, vocab_to_embed_uses_prob_dist=False,
        num_modality_processing_mlp_layers=1, truncate_mcmc=False, clamp_futures_grad=False,
        clamp_futures_grad_max_change=9.0, absolute_clamp=0.0, clamp_max_after_warm_up=0.0,
        sharpen_predicted_distribution=0.0, reconstruction_coeff=1.0, contrastive_loss=False,
        contrastive_loss_coeff=0.0005, soften_target_prob_dist=0.0,
        infer_ebt_override_alpha=0.0, infer_langevin_dynamics_noise=0.0, infer_generated_samples=1,
        infer_debug_sample_distances=False, infer_energy_sampling_technique="min",
        infer_langevin_first_step=False, infer_accept_lower_energies=False,
        infer_ebt_num_steps=1, infer_steps_final_landscape=False, infer_alpha_final_landscape=False,
    )
    h.update(overrides)
    return h


def token_batch(offset=0, batch=BATCH, length=SEQ + 1):
    """Token ids in 1..VOCAB-1 (0 is the pad token), with one pad in the last row."""
    rng = np.random.default_rng(seed() + 11 + offset)
    ids = rng.integers(1, VOCAB, size=(batch, length))
    ids[-1, -1] = 0
    return ids


def toy_target(dim, offset=0):
    """The minimiser t of the convex toy energy 0.5 * ||y - t||^2 per position."""
    rng = np.random.default_rng(seed() + 23 + offset)
    return rng.normal(size=(BATCH, SEQ, dim))


def toy_start(dim, offset=0):
    """A deterministic initial candidate y0 for the toy energy."""
    rng = np.random.default_rng(seed() + 31 + offset)
    return 3.0 * rng.normal(size=(BATCH, SEQ, dim))
