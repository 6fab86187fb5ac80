"""The run side of grading: put files in a sandbox, run one program, bring its outputs back.

Two programs run here, each in a folder of its own with a random name:

- :func:`run_pytest`: pytest over a selection, with rcb's verdict plugin (and any
  other harness plugin) loaded first; brings back the signed verdict and the
  junit report.
- :func:`run_cases`: the case runner over the code under test; brings back its
  outputs (``outputs.json`` and ``arrays.npz``).

Nothing here decides pass or fail: that is :mod:`rcb_action.scoring`, over the
plain data returned here. Every file read back is a plain file under a byte cap
(a symbolic link, a FIFO or an oversized file is reported as ``unsafe``).
"""

from __future__ import annotations

import secrets
import uuid
from dataclasses import dataclass, field

from rcb_action.sandbox._base import ExecResult, Sandbox, UnsafeFileError
from rcb_action.tasks import INPUTS_DIR

HARNESS_DIR = ".rcb"
# Bytes the harness reads back, per file.
VERDICT_MAX_BYTES = 1 << 20
JUNIT_MAX_BYTES = 8 << 20
OUTPUTS_MAX_BYTES = {"outputs.json": 32 << 20, "arrays.npz": 64 << 20}
_THREADS = {"OMP_NUM_THREADS": "1", "MKL_NUM_THREADS": "1", "OPENBLAS_NUM_THREADS": "1"}
# No bytecode caches in an attempt's folder: nothing another process could swap in.
_NO_PYC = {"PYTHONDONTWRITEBYTECODE": "1"}


@dataclass
class PytestRaw:
    """What a sandboxed pytest run left: its exec result and the files it wrote."""

    result: ExecResult
    key: str
    verdict: str | None = None
    junit: str | None = None
    unsafe: str | None = None


@dataclass
class CasesRaw:
    """What a sandboxed run of the cases left: its exec result and its outputs."""

    result: ExecResult
    outputs: dict[str, bytes] = field(default_factory=dict)
    unsafe: str | None = None


def _read(sandbox: Sandbox, rel: str, limit: int) -> tuple[bytes | None, str | None]:
    """(the file's bytes or None when missing, what is wrong with it when it is unsafe)."""
    try:
        data = sandbox.read_file(rel, max_bytes=limit)
    except FileNotFoundError:
        return None, None
    except UnsafeFileError as exc:
        return None, str(exc)
    if len(data) > limit:
        return None, f"{rel.rsplit('/', 1)[-1]} holds {len(data)} bytes, over {limit}"
    return data, None


def _pythonpath(base: str) -> str:
    # inputs/: a task's input builders, shared by its cases and its checks.
    return f"{base}/{HARNESS_DIR}:{base}/src:{base}/{INPUTS_DIR}:{base}"


def run_pytest(
    sandbox: Sandbox,
    files: dict[str, bytes],
    selection: list[str],
    *,
    plugins: dict[str, bytes],
    timeout_s: float,
    env: dict[str, str] | None = None,
) -> PytestRaw:
    """Run pytest over ``selection`` with ``files`` in a fresh folder of ``sandbox``.

    Args:
        sandbox: an open sandbox.
        files: relative path -> bytes, written read-only.
        selection: pytest node ids or paths.
        plugins: module name -> source of harness plugins loaded with ``-p`` (the
            first is loaded first); ``rcb_verdict`` must be one of them.
        timeout_s: wall-clock limit.
        env: extra environment variables; ``{base}`` in a value is replaced by the
            run folder's absolute path.

    Raises:
        Exception: whatever the sandbox raises when it cannot run at all.
    """
    attempt = f"a-{uuid.uuid4().hex[:12]}"
    key = secrets.token_hex(32)
    tag = secrets.token_hex(6)
    base = f"{sandbox.workspace}/{attempt}"
    sandbox.mkdir(attempt, writable=True)
    written = {f"{attempt}/{rel}": data for rel, data in files.items()}
    for name, source in plugins.items():
        written[f"{attempt}/{HARNESS_DIR}/{name}.py"] = source
    try:
        sandbox.write_files(written, writable=False)
        # Without the unraisable- and thread-exception plugins: they only turn such
        # exceptions into warnings (never a verdict), and at exit pytest 8.4's runs
        # gc.collect() five times, about 0.6 s of every run once torch is imported.
        argv = [sandbox.python, "-m", "pytest", "-q", "-p", "no:cacheprovider"]
        argv += ["-p", "no:unraisableexception", "-p", "no:threadexception"]
        for name in plugins:
            argv += ["-p", name]
        argv += [
            f"--junitxml={base}/junit-{tag}.xml", "-o", "junit_family=xunit1",
            "-o", "addopts=", f"--rootdir={base}", *selection,
        ]  # fmt: skip
        full_env = {
            "PYTHONPATH": _pythonpath(base),
            "RCB_VERDICT_PATH": f"{base}/verdict-{tag}.json",
            **_THREADS,
            **_NO_PYC,
            **{k: v.replace("{base}", base) for k, v in (env or {}).items()},
        }
        result = sandbox.exec(
            argv, timeout_s=timeout_s, cwd=attempt, env=full_env, stdin=key.encode() + b"\n"
        )
        verdict, verdict_unsafe = _read(sandbox, f"{attempt}/verdict-{tag}.json", VERDICT_MAX_BYTES)
        junit, junit_unsafe = _read(sandbox, f"{attempt}/junit-{tag}.xml", JUNIT_MAX_BYTES)
    finally:
        sandbox.remove(attempt)
    return PytestRaw(
        result=result,
        key=key,
        verdict=None if verdict is None else verdict.decode("utf-8", "replace"),
        junit=None if junit is None else junit.decode("utf-8", "replace"),
        unsafe=verdict_unsafe or junit_unsafe,
    )


def run_cases(
    sandbox: Sandbox,
    files: dict[str, bytes],
    *,
    runner: bytes,
    targets: list[str],
    cases_dir: str,
    timeout_s: float,
    env: dict[str, str] | None = None,
) -> CasesRaw:
    """Run the case runner (``runner``, the source of ``rcb_cases``) over ``files``.

    Args:
        sandbox: an open sandbox.
        files: relative path -> bytes (the code under test and the cases), read-only.
        runner: the case runner's source.
        targets: files (relative) the runner compiles first; a failure is reported
            as a compile error instead of running any case.
        cases_dir: the folder (relative) of the case modules.
        timeout_s: wall-clock limit.
        env: extra environment variables (``RCB_SEED``).

    Raises:
        Exception: whatever the sandbox raises when it cannot run at all.
    """
    attempt = f"a-{uuid.uuid4().hex[:12]}"
    base = f"{sandbox.workspace}/{attempt}"
    sandbox.mkdir(attempt, writable=True)
    written = {f"{attempt}/{rel}": data for rel, data in files.items()}
    written[f"{attempt}/{HARNESS_DIR}/rcb_cases.py"] = runner
    try:
        sandbox.write_files(written, writable=False)
        argv = [
            sandbox.python, "-m", "rcb_cases", base,
            *(f"{base}/{t}" for t in targets), "--cases", f"{base}/{cases_dir}",
        ]  # fmt: skip
        full_env = {"PYTHONPATH": _pythonpath(base), **_THREADS, **_NO_PYC, **(env or {})}
        result = sandbox.exec(argv, timeout_s=timeout_s, cwd=attempt, env=full_env)
        outputs: dict[str, bytes] = {}
        unsafe = None
        if not result.timed_out:
            for name, limit in OUTPUTS_MAX_BYTES.items():
                data, problem = _read(sandbox, f"{attempt}/{name}", limit)
                unsafe = unsafe or problem
                if data is not None:
                    outputs[name] = data
    finally:
        sandbox.remove(attempt)
    return CasesRaw(result=result, outputs=outputs, unsafe=unsafe)
