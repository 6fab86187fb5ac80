# Stand-in written for the rcb task "archercoder": NOT the authors' code (see notes.md).
# verl's DataProto wraps a tensordict.TensorDict; tensordict is not installed here. This
# keeps only what DataParallelPPOActor.update_policy uses: select(...).batch, meta_info,
# non_tensor_batch, and a batch of tensors that splits along dim 0 and moves to a device.
import torch


class TensorBatch(dict):
    """A dict of tensors sharing their first dimension (stands in for TensorDict)."""

    def split(self, split_size):
        n = len(next(iter(self.values())))
        return [TensorBatch({k: v[i : i + split_size] for k, v in self.items()}) for i in range(0, n, split_size)]

    def to(self, device):
        return TensorBatch({k: v.to(device) for k, v in self.items()})

    def __len__(self):
        return len(next(iter(self.values())))


class DataProto:
    def __init__(self, batch=None, non_tensor_batch=None, meta_info=None):
        self.batch = TensorBatch(batch or {})
        self.non_tensor_batch = dict(non_tensor_batch or {})
        self.meta_info = dict(meta_info or {})

    def select(self, batch_keys=None, non_tensor_batch_keys=None, meta_info_keys=None, deepcopy=False):
        keys = list(self.batch.keys()) if batch_keys is None else batch_keys
        return DataProto({k: self.batch[k] for k in keys}, {}, self.meta_info)
