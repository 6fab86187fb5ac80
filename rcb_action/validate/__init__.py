"""Task validation: schema, tags, reference passes, null fails, time per task."""

from rcb_action.validate._validate import Problem, TaskCheck, check_task, validate_tasks

__all__ = ["Problem", "TaskCheck", "check_task", "validate_tasks"]
