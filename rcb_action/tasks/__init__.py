"""Task loading: the strict ``task.yaml`` schema and the paper2code tag parser."""

from rcb_action.tasks._loader import (
    INPUTS_DIR,
    LICENSE_FILES,
    Task,
    find_tasks,
    load_task,
    load_tasks,
    load_tasks_of_kind,
    resolve_tasks_dir,
)
from rcb_action.tasks._plain import read_plain_file
from rcb_action.tasks._requirements import pinned_requirement, read_requirements
from rcb_action.tasks._schema import (
    VENDORED_LICENSES,
    AgentVisibility,
    CurveFact,
    ExpectedResults,
    MetricExpectation,
    ModuleCheck,
    PaperSource,
    ReproductionBudget,
    ReproductionConfig,
    Rubric,
    RubricItem,
    SnippetConfig,
    TaskConfig,
)
from rcb_action.tasks._tags import AnnotatedFile, Snippet, TagError, code_lines, parse_tags

__all__ = [
    "INPUTS_DIR",
    "LICENSE_FILES",
    "VENDORED_LICENSES",
    "AgentVisibility",
    "AnnotatedFile",
    "CurveFact",
    "ExpectedResults",
    "MetricExpectation",
    "ModuleCheck",
    "PaperSource",
    "ReproductionBudget",
    "ReproductionConfig",
    "Rubric",
    "RubricItem",
    "Snippet",
    "SnippetConfig",
    "TagError",
    "Task",
    "TaskConfig",
    "code_lines",
    "find_tasks",
    "load_task",
    "load_tasks",
    "load_tasks_of_kind",
    "parse_tags",
    "pinned_requirement",
    "read_plain_file",
    "read_requirements",
    "resolve_tasks_dir",
]
