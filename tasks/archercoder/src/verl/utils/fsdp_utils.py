# Stand-in written for the rcb task "archercoder": NOT the authors' code (see notes.md).
# FSDP2 helpers: the task's actor is a plain nn.Module, so neither is ever used.


class FSDPModule:
    pass


def fsdp2_clip_grad_norm_(parameters, max_norm, norm_type=2.0, error_if_nonfinite=False, foreach=None):
    raise NotImplementedError("FSDP2 is not part of the rcb task")
