from rlm.core.rlm import RLM
from rlm.utils.exceptions import (
    BudgetExceededError,
    CancellationError,
    ErrorThresholdExceededError,
    TimeoutExceededError,
    TokenLimitExceededError,
)

__all__ = [
    "RLM",
    "BudgetExceededError",
    "TimeoutExceededError",
    "TokenLimitExceededError",
    "ErrorThresholdExceededError",
    "CancellationError",
]
