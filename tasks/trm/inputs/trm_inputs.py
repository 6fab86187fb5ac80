"""Seeded inputs shared by the TRM cases and checks: tiny configs, weights keyed by
parameter name (so a correct module gives the same numbers whatever order it creates its
layers in), token batches, and the stub outputs the loss head is driven with."""
import math
import os
import zlib

import numpy as np

BATCH, SEQ, VOCAB, HIDDEN, HEADS, PUZZLES, PREFIX = 4, 8, 10, 32, 2, 5, 2
IGNORE = -100


def seed():
    return int(os.environ.get("RCB_SEED", "0"))


def config(**overrides):
    cfg = dict(batch_size=BATCH, seq_len=SEQ, puzzle_emb_ndim=HIDDEN, num_puzzle_identifiers=PUZZLES,
               vocab_size=VOCAB, H_cycles=3, L_cycles=2, H_layers=0, L_layers=2, hidden_size=HIDDEN,
               expansion=2.0, num_heads=HEADS, pos_encodings="rope", halt_max_steps=4,
               halt_exploration_prob=0.0, forward_dtype="float32", mlp_t=False, puzzle_emb_len=PREFIX,
               no_ACT_continue=True)
    cfg.update(overrides)
    return cfg


def weight(name, shape, offset):
    """Deterministic values for one tensor of a state dict, from its name and shape."""
    rng = np.random.default_rng([seed(), offset, zlib.crc32(name.encode())])
    scale = 1.0 / math.sqrt(shape[-1]) if len(shape) >= 2 else 1.0
    if name.endswith("q_head.bias"):
        scale = 0.2  # q logits of both signs: some rows halt, some go on
    return (rng.standard_normal(shape) * scale).astype(np.float32)


def hidden(offset, length=SEQ + PREFIX):
    rng = np.random.default_rng([seed(), 11, offset])
    return rng.standard_normal((BATCH, length, HIDDEN)).astype(np.float32)


def carry(offset):
    rng = np.random.default_rng([seed(), 13, offset])
    return [rng.standard_normal((BATCH, SEQ + PREFIX, HIDDEN)).astype(np.float32) for _ in range(2)]


def batch(offset):
    """inputs, labels (some ignored; the last row fully ignored on odd offsets), puzzle ids."""
    rng = np.random.default_rng([seed(), 17, offset])
    inputs = rng.integers(0, VOCAB, size=(BATCH, SEQ))
    labels = rng.integers(0, VOCAB, size=(BATCH, SEQ))
    labels[rng.random((BATCH, SEQ)) < 0.25] = IGNORE
    if offset % 2:
        labels[-1] = IGNORE
    ids = rng.integers(0, PUZZLES, size=(BATCH,))
    return {"inputs": inputs.astype(np.int32), "labels": labels.astype(np.int32),
            "puzzle_identifiers": ids.astype(np.int32)}


def stub_outputs(offset, n=6):
    """What a model hands the loss head: logits (row 0 predicts every valid label, row 1 all
    but one), q logits, a bootstrapped continue target, labels (row 2 with one valid label,
    the last row fully ignored), and which rows halted."""
    rng = np.random.default_rng([seed(), 19, offset])
    labels = rng.integers(0, VOCAB, size=(n, SEQ))
    labels[rng.random((n, SEQ)) < 0.3] = IGNORE
    labels[0, 0] = labels[1, 0] = 3
    labels[-1] = IGNORE
    labels[2, 1:] = IGNORE  # one valid label only
    labels[2, 0] = 5
    logits = rng.standard_normal((n, SEQ, VOCAB)) * 2.0
    for row in (0, 1):
        for j in range(SEQ):
            if labels[row, j] != IGNORE:
                logits[row, j, labels[row, j]] = 8.0
    logits[1, 0, 3] = -8.0
    return {"logits": logits.astype(np.float32), "labels": labels.astype(np.int32),
            "q_halt_logits": (rng.standard_normal(n) * 2.0).astype(np.float32),
            "q_continue_logits": (rng.standard_normal(n) * 2.0).astype(np.float32),
            "target_q_continue": rng.random(n).astype(np.float32),
            "halted": rng.random(n) < 0.5, "steps": rng.integers(1, 5, size=n).astype(np.int32)}
