"""Task validation: schema, tags, reference passes, null fails, time per task."""

from rcb_action.validate._mutants import (
    MUTANTS_FILE,
    Mutant,
    SnippetMutants,
    generate_mutants,
    mutate_task,
    read_mutants_file,
)
from rcb_action.validate._validate import Problem, TaskCheck, check_task, validate_tasks

__all__ = [
    "MUTANTS_FILE",
    "Mutant",
    "Problem",
    "SnippetMutants",
    "TaskCheck",
    "check_task",
    "generate_mutants",
    "mutate_task",
    "read_mutants_file",
    "validate_tasks",
]
