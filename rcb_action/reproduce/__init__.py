"""The reproduction track: an agent reproduces a paper's experiment in a clean sandbox,
and each stage (plan, env_setup, code_impl, train_debug, result_check) is graded on
its own, so a report says where a model fails.

Results go to ``OUT/reproduction.jsonl`` (one record per attempt) with step logs
under ``OUT/repro-logs/``; :func:`reproduction_section` turns the records into the
report's reproduction section.
"""

from rcb_action.reproduce._attempt import AttemptSetting, dimensions_of, run_attempt
from rcb_action.reproduce._grade import ResultGrade, check_curve, check_metric, grade_results
from rcb_action.reproduce._judge import judge_prompt, judge_scores, parse_judgement
from rcb_action.reproduce._records import (
    DIMENSIONS,
    GOLD_FILE,
    LOGS_DIR,
    REPRODUCTION_FILE,
    STAGES,
    CurveCheck,
    JudgeItem,
    JudgeRecord,
    MetricCheck,
    ReproductionRecord,
    ReproductionStore,
    StageRecord,
    read_reproduction_records,
)
from rcb_action.reproduce._reference import (
    BASELINE_FLAGS,
    BASELINES,
    ReferenceAgent,
    baseline_label,
    baseline_turns,
    reference_files,
    reference_turns,
)
from rcb_action.reproduce._report import (
    DIMENSION_LABELS,
    STAGE_LABELS,
    reproduction_section,
    stage_funnel,
)
from rcb_action.reproduce._run import (
    ReproduceConfig,
    ReproduceSummary,
    adversary_escape,
    check_adversaries,
    check_gold,
    get_agent,
    gold_failure,
    gold_passed,
    gold_summary,
    reproduce,
)
from rcb_action.reproduce._stages import (
    AGENT_STAGES,
    MIN_PLAN_WORDS,
    prose_words,
    stage_instructions,
)
from rcb_action.reproduce._texts import PAPER_FILE, ReproductionTexts, reproduction_texts
from rcb_action.reproduce._wheelhouse import (
    WHEELHOUSE_MOUNT,
    allowed_packages,
    build_wheelhouse,
    sandbox_pip_env,
)

__all__ = [
    "AGENT_STAGES",
    "BASELINES",
    "BASELINE_FLAGS",
    "DIMENSIONS",
    "DIMENSION_LABELS",
    "GOLD_FILE",
    "LOGS_DIR",
    "MIN_PLAN_WORDS",
    "PAPER_FILE",
    "REPRODUCTION_FILE",
    "STAGES",
    "STAGE_LABELS",
    "WHEELHOUSE_MOUNT",
    "AttemptSetting",
    "CurveCheck",
    "JudgeItem",
    "JudgeRecord",
    "MetricCheck",
    "ReferenceAgent",
    "ReproduceConfig",
    "ReproduceSummary",
    "ReproductionRecord",
    "ReproductionStore",
    "ReproductionTexts",
    "ResultGrade",
    "StageRecord",
    "adversary_escape",
    "allowed_packages",
    "baseline_label",
    "baseline_turns",
    "build_wheelhouse",
    "check_adversaries",
    "check_curve",
    "check_gold",
    "check_metric",
    "dimensions_of",
    "get_agent",
    "gold_failure",
    "gold_passed",
    "gold_summary",
    "grade_results",
    "judge_prompt",
    "judge_scores",
    "parse_judgement",
    "prose_words",
    "read_reproduction_records",
    "reference_files",
    "reference_turns",
    "reproduce",
    "reproduction_section",
    "reproduction_texts",
    "run_attempt",
    "sandbox_pip_env",
    "stage_funnel",
    "stage_instructions",
]
