"""Agents: a model that works in a sandbox through tools (run, read_file, write_file,
submit), one logged step at a time.

The loop is the reproduction track's engine; the tools run only inside a sandbox.
"""

from rcb_action.agent._base import (
    AgentModel,
    AgentSession,
    AgentTurn,
    Message,
    ScriptedSession,
    ToolCall,
    turn_from_dict,
    turn_to_dict,
)
from rcb_action.agent._litellm import LiteLLMAgent, MockTurn
from rcb_action.agent._loop import AgentLoop, Budget, Guard, StageEnd, StepLog, Usage, utc_now
from rcb_action.agent._replay import ReplayAgent
from rcb_action.agent._snippet import feedback, refine_prompt, visible_passed
from rcb_action.agent._tools import TOOL_NAMES, TOOLS, ToolResult, Workbench, clip_output

__all__ = [
    "TOOLS",
    "TOOL_NAMES",
    "AgentLoop",
    "AgentModel",
    "AgentSession",
    "AgentTurn",
    "Budget",
    "Guard",
    "LiteLLMAgent",
    "Message",
    "MockTurn",
    "ReplayAgent",
    "ScriptedSession",
    "StageEnd",
    "StepLog",
    "ToolCall",
    "ToolResult",
    "Usage",
    "Workbench",
    "clip_output",
    "feedback",
    "refine_prompt",
    "turn_from_dict",
    "turn_to_dict",
    "utc_now",
    "visible_passed",
]
