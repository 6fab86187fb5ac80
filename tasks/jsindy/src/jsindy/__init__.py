from .sindy_model import JSINDyModel

__all__ = [
    "JSINDyModel"
]