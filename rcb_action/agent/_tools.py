"""The agent's four tools, carried out inside a sandbox: run, read_file, write_file, submit.

Every tool runs as the sandbox's user inside the sandbox (reading and writing
files included), so what the agent does is confined exactly as its commands are,
and the files it makes belong to it. Nothing an agent asks for runs on the host.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from rcb_action.agent._base import ToolCall
from rcb_action.sandbox import ExecResult, Sandbox

# What the model sees of a tool's output: the head and the tail.
MAX_TOOL_OUTPUT = 16_000
_HEAD = 4_000
MAX_READ_BYTES = 200_000
MAX_WRITE_BYTES = 4_000_000
DEFAULT_TIMEOUT_S = 120

_READ = """\
import sys
path, limit = sys.argv[1], int(sys.argv[2])
with open(path, "rb") as handle:
    data = handle.read(limit + 1)
sys.stdout.write(data[:limit].decode("utf-8", "replace"))
if len(data) > limit:
    sys.stdout.write("\\n[rcb: the file is longer; cut at %d bytes]" % limit)
"""
# The content arrives on stdin after a line with its length (no EOF is needed).
_WRITE = """\
import os, sys
path = sys.argv[1]
size = int(sys.stdin.buffer.readline())
data = sys.stdin.buffer.read(size)
folder = os.path.dirname(path)
if folder:
    os.makedirs(folder, exist_ok=True)
with open(path, "wb") as handle:
    handle.write(data)
print(len(data))
"""


def _schema(name: str, description: str, properties: dict[str, Any], required: list[str]) -> Any:
    return {
        "type": "function",
        "function": {
            "name": name,
            "description": description,
            "parameters": {"type": "object", "properties": properties, "required": required},
        },
    }


TOOLS: list[dict[str, Any]] = [
    _schema(
        "run",
        "Run a bash command in the sandbox (your working folder is the current directory). "
        "Returns the exit status and the output (long output is cut in the middle).",
        {
            "command": {"type": "string", "description": "the bash command line"},
            "timeout_s": {
                "type": "integer",
                "description": f"seconds before the command is killed (default {DEFAULT_TIMEOUT_S})",
            },
        },
        ["command"],
    ),
    _schema(
        "read_file",
        "Read a text file (relative to the working folder, or absolute).",
        {"path": {"type": "string"}},
        ["path"],
    ),
    _schema(
        "write_file",
        "Create or replace a file with the given content (folders are created).",
        {"path": {"type": "string"}, "content": {"type": "string"}},
        ["path", "content"],
    ),
    _schema(
        "submit",
        "Say that the current stage is done; the harness then checks it and moves on.",
        {"note": {"type": "string", "description": "a short note on what you did"}},
        [],
    ),
]
TOOL_NAMES = [tool["function"]["name"] for tool in TOOLS]


def clip_output(text: str, limit: int = MAX_TOOL_OUTPUT) -> str:
    """``text`` cut in the middle to at most about ``limit`` characters."""
    if len(text) <= limit:
        return text
    tail = limit - _HEAD
    cut = len(text) - _HEAD - tail
    return f"{text[:_HEAD]}\n[rcb: {cut} characters cut]\n{text[-tail:]}"


@dataclass
class ToolResult:
    """What a tool did: the answer the model sees and what the step log keeps."""

    output: str
    log: dict[str, Any] = field(default_factory=dict)
    submitted: bool = False


class Workbench:
    """The tools bound to one sandbox folder.

    Args:
        sandbox: where everything runs.
        cwd: the agent's working folder, relative to the sandbox's workspace.
        time_left: seconds the attempt may still spend; caps each command's timeout.
        max_timeout_s: the longest a single command may run.
    """

    def __init__(
        self,
        sandbox: Sandbox,
        cwd: str,
        *,
        time_left: Callable[[], float],
        max_timeout_s: float,
    ) -> None:
        self.sandbox = sandbox
        self.cwd = cwd
        self.time_left = time_left
        self.max_timeout_s = max_timeout_s

    def execute(self, call: ToolCall) -> ToolResult:
        """Carry out one call. Errors the model caused become answers, never exceptions."""
        try:
            args = call.parsed()
        except ValueError as exc:
            return ToolResult(f"error: {exc}", {"error": str(exc)})
        handler = {
            "run": self._run,
            "read_file": self._read_file,
            "write_file": self._write_file,
            "submit": self._submit,
        }.get(call.name)
        if handler is None:
            message = f"error: no tool named '{call.name}'; the tools are {', '.join(TOOL_NAMES)}"
            return ToolResult(message, {"error": message})
        try:
            return handler(args)
        except (TypeError, ValueError) as exc:
            return ToolResult(f"error: {exc}", {"error": str(exc)})

    def _string(self, args: dict[str, Any], name: str) -> str:
        value = args.get(name)
        if not isinstance(value, str):
            raise ValueError(f"'{name}' must be a string")
        return value

    def _exec(self, argv: list[str], timeout_s: float, stdin: bytes | None = None) -> ExecResult:
        return self.sandbox.exec(argv, timeout_s=timeout_s, cwd=self.cwd, stdin=stdin)

    def _run(self, args: dict[str, Any]) -> ToolResult:
        command = self._string(args, "command")
        wanted = args.get("timeout_s", DEFAULT_TIMEOUT_S)
        if not isinstance(wanted, int | float) or isinstance(wanted, bool) or wanted <= 0:
            raise ValueError("'timeout_s' must be a positive number")
        timeout = max(1.0, min(float(wanted), self.max_timeout_s, self.time_left()))
        started = time.monotonic()
        result = self._exec(["bash", "-c", command], timeout)
        status = "killed: timed out" if result.timed_out else f"exit status {result.returncode}"
        if result.oom_killed:
            status = "killed: out of memory"
        text = f"[{status} after {time.monotonic() - started:.1f} s]\n{result.stdout}"
        if result.stderr:
            text += f"\n[stderr]\n{result.stderr}"
        return ToolResult(
            clip_output(text),
            {
                "returncode": result.returncode,
                "timed_out": result.timed_out,
                "timeout_s": round(timeout, 1),
                "stdout": result.stdout,
                "stderr": result.stderr,
            },
        )

    def _read_file(self, args: dict[str, Any]) -> ToolResult:
        path = self._string(args, "path")
        result = self._exec(["python3", "-c", _READ, path, str(MAX_READ_BYTES)], 60)
        if result.returncode != 0:
            reason = (result.stderr.strip().splitlines() or ["cannot read it"])[-1]
            return ToolResult(f"error: {path}: {reason}", {"error": reason})
        return ToolResult(clip_output(result.stdout), {"bytes": len(result.stdout)})

    def _write_file(self, args: dict[str, Any]) -> ToolResult:
        path = self._string(args, "path")
        data = self._string(args, "content").encode("utf-8")
        if len(data) > MAX_WRITE_BYTES:
            raise ValueError(f"the content is over {MAX_WRITE_BYTES} bytes")
        stdin = str(len(data)).encode() + b"\n" + data
        result = self._exec(["python3", "-c", _WRITE, path], 60, stdin=stdin)
        if result.returncode != 0:
            reason = (result.stderr.strip().splitlines() or ["cannot write it"])[-1]
            return ToolResult(f"error: {path}: {reason}", {"error": reason})
        return ToolResult(f"wrote {len(data)} bytes to {path}", {"bytes": len(data)})

    def _submit(self, args: dict[str, Any]) -> ToolResult:
        note = args.get("note", "")
        return ToolResult(
            "submitted; the harness checks this stage now",
            {"note": note if isinstance(note, str) else str(note)},
            submitted=True,
        )
