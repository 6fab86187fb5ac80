from .wrapper import DeepThinkLLM
