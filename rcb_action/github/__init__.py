"""GitHub glue: step outputs, job summaries, annotations, the pull-request comment
(one per key, edited in place), the base-branch comparison, the evaluation matrix,
model submissions and the validation verdict.

Everything here reads the runner's environment (``GITHUB_OUTPUT``,
``GITHUB_STEP_SUMMARY``, ``GITHUB_EVENT_PATH``, ``GITHUB_API_URL``, ...) and talks to
the REST API through PyGithub, so it runs the same against a local fake.
"""

from rcb_action.github._action import (
    ActionInputs,
    ActionPlan,
    EvaluateOutcome,
    action_plan,
    error_annotation,
    evaluate_config,
    fork_pull_request,
    headline_score,
    results_cache_key,
    run_evaluate,
    run_merge,
)
from rcb_action.github._baseline import (
    DEFAULT_ARTIFACT,
    REPORT_FILE,
    Baseline,
    fetch_artifact_report,
    load_report,
    report_from_zip,
)
from rcb_action.github._comment import (
    ACTIONS_BOT,
    MARKER_PATTERN,
    CommentResult,
    carries_marker,
    comment_marker,
    github_client,
    pull_base_branch,
    strip_markers,
    token_author,
    upsert_comment,
)
from rcb_action.github._compare import (
    Comparison,
    ModelChange,
    TaskChange,
    compare_reports,
    regressions,
)
from rcb_action.github._context import GitHubContext
from rcb_action.github._markdown import render_comment, render_summary, score_table
from rcb_action.github._plan import (
    Changes,
    Leg,
    Plan,
    changed_files,
    classify_changes,
    plan_evaluation,
    split_list,
)
from rcb_action.github._submissions import (
    COMPLETIONS_FILE,
    MODEL_FILE,
    SUBMISSIONS_DIR,
    Submission,
    check_submission,
    check_submissions,
    find_submissions,
)
from rcb_action.github._verdict import VERDICT_KEY, build_verdict, render_verdict
from rcb_action.github._verdict_schema import (
    VERDICT_FILE,
    ItemVerdict,
    Verdict,
    read_verdict,
    write_verdict,
)
from rcb_action.github._workflow import annotation, append_summary, set_outputs, workspace_path

__all__ = [
    "ACTIONS_BOT",
    "COMPLETIONS_FILE",
    "DEFAULT_ARTIFACT",
    "MARKER_PATTERN",
    "MODEL_FILE",
    "REPORT_FILE",
    "SUBMISSIONS_DIR",
    "VERDICT_FILE",
    "VERDICT_KEY",
    "ActionInputs",
    "ActionPlan",
    "Baseline",
    "Changes",
    "CommentResult",
    "Comparison",
    "EvaluateOutcome",
    "GitHubContext",
    "ItemVerdict",
    "Leg",
    "ModelChange",
    "Plan",
    "Submission",
    "TaskChange",
    "Verdict",
    "action_plan",
    "annotation",
    "append_summary",
    "build_verdict",
    "carries_marker",
    "changed_files",
    "check_submission",
    "check_submissions",
    "classify_changes",
    "comment_marker",
    "compare_reports",
    "error_annotation",
    "evaluate_config",
    "fetch_artifact_report",
    "find_submissions",
    "fork_pull_request",
    "github_client",
    "headline_score",
    "load_report",
    "plan_evaluation",
    "pull_base_branch",
    "read_verdict",
    "regressions",
    "render_comment",
    "render_summary",
    "render_verdict",
    "report_from_zip",
    "results_cache_key",
    "run_evaluate",
    "run_merge",
    "score_table",
    "set_outputs",
    "split_list",
    "strip_markers",
    "token_author",
    "upsert_comment",
    "workspace_path",
    "write_verdict",
]
