# Stand-in written for the rcb task "archercoder": NOT the authors' code (see notes.md).
# Ulysses sequence parallelism (ulysses_sequence_parallel_size > 1) is not used by the cases.


def gather_outpus_and_unpad(*args, **kwargs):
    raise NotImplementedError("sequence parallelism is not part of the rcb task")


def ulysses_pad(*args, **kwargs):
    raise NotImplementedError("sequence parallelism is not part of the rcb task")


def ulysses_pad_and_slice_inputs(*args, **kwargs):
    raise NotImplementedError("sequence parallelism is not part of the rcb task")
