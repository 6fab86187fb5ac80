"""Task validation: schema, tags, reference passes, null fails, time per task, and what
a snippet's prompt gives away."""

from rcb_action.validate._giveaways import SnippetSizes, check_giveaways, snippet_sizes
from rcb_action.validate._index import INDEX_FILE, render_index
from rcb_action.validate._mutants import (
    MUTANTS_FILE,
    Mutant,
    SnippetMutants,
    generate_mutants,
    mutate_task,
    read_mutants_file,
)
from rcb_action.validate._validate import (
    Problem,
    TaskCheck,
    check_task,
    problem_from_error,
    validate_tasks,
)

__all__ = [
    "INDEX_FILE",
    "MUTANTS_FILE",
    "Mutant",
    "Problem",
    "SnippetMutants",
    "SnippetSizes",
    "TaskCheck",
    "check_giveaways",
    "check_task",
    "generate_mutants",
    "mutate_task",
    "problem_from_error",
    "read_mutants_file",
    "render_index",
    "snippet_sizes",
    "validate_tasks",
]
