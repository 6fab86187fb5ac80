# Stand-in written for the rcb task "reinforce-ada": NOT the authors' code (see notes.md).
# verl's DataProto wraps a tensordict.TensorDict, which is not installed here. This keeps
# what the Reinforce-Ada sampling loop uses: a dict of tensors (batch) and a dict of numpy
# object arrays (non_tensor_batch) sharing their first dimension, meta_info, row selection
# by index list or slice, repeat, concat, union and from_single_dict.
import numpy as np
import torch


class DataProto:
    def __init__(self, batch=None, non_tensor_batch=None, meta_info=None):
        self.batch = dict(batch or {})
        self.non_tensor_batch = dict(non_tensor_batch or {})
        self.meta_info = dict(meta_info or {})

    def __len__(self):
        for v in self.batch.values():
            return v.shape[0]
        for v in self.non_tensor_batch.values():
            return len(v)
        return 0

    def __getitem__(self, item):
        if isinstance(item, int):
            item = [item]
        if isinstance(item, slice):
            idx = list(range(len(self)))[item]
        else:
            idx = [int(i) for i in item]
        t = torch.as_tensor(idx, dtype=torch.long)
        batch = {k: v[t] for k, v in self.batch.items()}
        non_tensor = {k: np.asarray(v, dtype=object)[idx] for k, v in self.non_tensor_batch.items()}
        return DataProto(batch, non_tensor, self.meta_info)

    def repeat(self, repeat_times=2, interleave=True):
        if interleave:
            batch = {k: v.repeat_interleave(repeat_times, dim=0) for k, v in self.batch.items()}
            non_tensor = {k: np.repeat(v, repeat_times, axis=0) for k, v in self.non_tensor_batch.items()}
        else:
            batch = {k: v.repeat(repeat_times, *([1] * (v.dim() - 1))) for k, v in self.batch.items()}
            non_tensor = {k: np.tile(v, (repeat_times,) + (1,) * (v.ndim - 1)) for k, v in self.non_tensor_batch.items()}
        return DataProto(batch, non_tensor, self.meta_info)

    @staticmethod
    def concat(data):
        batch = {k: torch.cat([d.batch[k] for d in data], dim=0) for k in data[0].batch}
        non_tensor = {
            k: np.concatenate([np.asarray(d.non_tensor_batch[k], dtype=object) for d in data], axis=0)
            for k in data[0].non_tensor_batch
        }
        return DataProto(batch, non_tensor, data[0].meta_info)

    def union(self, other):
        self.batch.update(other.batch)
        self.non_tensor_batch.update(other.non_tensor_batch)
        self.meta_info.update(other.meta_info)
        return self

    @classmethod
    def from_single_dict(cls, data, meta_info=None):
        batch = {k: v for k, v in data.items() if isinstance(v, torch.Tensor)}
        non_tensor = {k: v for k, v in data.items() if isinstance(v, np.ndarray)}
        return cls(batch, non_tensor, meta_info)
