from .optimizers import LMSolver, LMSettings, AlternatingActiveSetLMSolver,AnnealedAlternatingActiveSetLMSolver
__all__ = [
    "AlternatingActiveSetLMSolver",
    "LMSolver",
    "LMSettings",
    "AnnealedAlternatingActiveSetLMSolver"
]