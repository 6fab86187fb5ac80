"""The results store: append-only JSONL, one record per attempt, fsynced per record."""

from rcb_action.results._store import (
    RESULTS_FILE,
    JsonlStore,
    PaperCondition,
    Record,
    RecordKey,
    ResultStore,
    combine_records,
    latest_records,
    merge_stores,
    read_jsonl,
    read_records,
)

__all__ = [
    "RESULTS_FILE",
    "JsonlStore",
    "PaperCondition",
    "Record",
    "RecordKey",
    "ResultStore",
    "combine_records",
    "latest_records",
    "merge_stores",
    "read_jsonl",
    "read_records",
]
