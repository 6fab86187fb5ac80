"""Stand-in for the one name kronos.py imports from huggingface_hub (not part of Kronos).

The authors' classes inherit PyTorchModelHubMixin, which only adds
from_pretrained / save_pretrained / push_to_hub (downloading and uploading weights).
The cases build small models from a seed and never load weights, so an empty
mixin keeps the authors' class definitions unchanged without the package.
"""


class PyTorchModelHubMixin:
    pass
