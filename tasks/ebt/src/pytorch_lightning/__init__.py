"""rcb shim, not the authors' code: the few pieces of pytorch_lightning.LightningModule
that model/nlp/ebt.py uses (an attribute dict of hyperparameters and `.device`)."""
import torch
from torch import nn


class AttributeDict(dict):
    def __getattr__(self, key):
        try:
            return self[key]
        except KeyError as e:
            raise AttributeError(key) from e

    def __setattr__(self, key, value):
        self[key] = value


class LightningModule(nn.Module):
    def __init__(self):
        super().__init__()
        self.hparams = AttributeDict()

    @property
    def device(self):
        for p in self.parameters():
            return p.device
        return torch.device("cpu")
