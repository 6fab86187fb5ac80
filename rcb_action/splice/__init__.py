"""Splicing: take the model's last fenced python block and put it where the snippet was."""

from rcb_action.splice._splice import extract_code, reindent, splice

__all__ = ["extract_code", "reindent", "splice"]
