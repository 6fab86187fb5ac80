"""rcb shim, not the authors' code: model/nlp/ebt.py imports Accuracy but never uses it."""


class Accuracy:
    def __init__(self, *args, **kwargs):
        raise NotImplementedError("torchmetrics is not installed in this task")
