# Stand-in written for the rcb task "archercoder": NOT the authors' code (see notes.md).
# Dynamic batch sizes (use_dynamic_bsz) are not used by the task's cases.


def get_reverse_idx(idx_map):
    raise NotImplementedError("use_dynamic_bsz is not part of the rcb task")


def rearrange_micro_batches(batch, max_token_len, dp_group=None, same_micro_num_in_dp=True, min_num_micro_batch=None):
    raise NotImplementedError("use_dynamic_bsz is not part of the rcb task")
