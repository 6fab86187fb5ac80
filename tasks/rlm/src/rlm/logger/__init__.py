from rlm.logger.rlm_logger import RLMLogger
from rlm.logger.verbose import VerbosePrinter

__all__ = ["RLMLogger", "VerbosePrinter"]
