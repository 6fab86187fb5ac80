"""Splicing: take the model's last fenced python block and put it where the snippet was."""

from rcb_action.splice._splice import (
    MAX_ANSWER_BYTES,
    extract_code,
    no_code_reason,
    reindent,
    splice,
)

__all__ = ["MAX_ANSWER_BYTES", "extract_code", "no_code_reason", "reindent", "splice"]
