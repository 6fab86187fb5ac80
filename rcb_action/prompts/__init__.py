"""Prompt building: mask one snippet, add the paper and the context, hash the bytes."""

from rcb_action.prompts._build import (
    CHARS_PER_TOKEN,
    PLACEHOLDER,
    PaperMode,
    Prompt,
    build_prompt,
    masked_file,
)

__all__ = [
    "CHARS_PER_TOKEN",
    "PLACEHOLDER",
    "PaperMode",
    "Prompt",
    "build_prompt",
    "masked_file",
]
