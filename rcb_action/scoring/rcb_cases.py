"""The case runner, run inside the run sandbox (A) with the code under test.

``python -m rcb_cases OUT_DIR TARGET [TARGET ...] --cases CASES_DIR``

It compiles each target file (the spliced file), imports every module of the
cases folder (``*.py`` not starting with ``_``, in name order) and calls each of
its ``case_<name>()`` functions (only those named in ``RCB_ONLY_CASES``, a
comma-separated list, when it is set: the cases the checks of one snippet read).
What a case returns is reduced to plain data:
``None``, booleans, numbers, strings, lists (tuples become lists), dicts with
string keys, and arrays (numpy arrays, and anything with ``__array__`` or a
torch-like ``detach().cpu().numpy()``). An exception in a case is data too: its
class name and message. Everything goes to ``OUT_DIR/outputs.json``, arrays to
``OUT_DIR/arrays.npz`` (``np.savez``, never pickled).

Nothing here is trusted: the code under test runs in this process and may rewrite
any of it. The outputs are only data for the check sandbox, which compares them
with the reference's outputs that this sandbox never holds. This file has no rcb
imports: it runs in the task's environment.
"""

from __future__ import annotations

import importlib.util
import json
import math
import os
import sys
import traceback

MESSAGE_CHARS = 2000
# Keys of the encoding; a dict a case returns may not use the prefix.
ARRAY_KEY = "__rcb_array__"
FLOAT_KEY = "__rcb_float__"
RESERVED = "__rcb_"
MAX_DEPTH = 64


class _Unsupported(TypeError):
    pass


class _Encoder:
    def __init__(self) -> None:
        self.arrays: dict[str, object] = {}

    def array(self, value: object) -> dict[str, str]:
        import numpy as np

        array = np.asarray(value)
        if array.dtype.hasobject:
            raise _Unsupported("an array of Python objects is not plain data")
        name = f"a{len(self.arrays)}"
        self.arrays[name] = array
        return {ARRAY_KEY: name}

    def encode(self, value: object, depth: int = 0) -> object:
        if depth > MAX_DEPTH:
            raise _Unsupported(f"nested deeper than {MAX_DEPTH} levels")
        if value is None or isinstance(value, bool | str):
            return value
        if isinstance(value, int):
            return value
        if isinstance(value, float):
            return value if math.isfinite(value) else {FLOAT_KEY: repr(value)}
        if isinstance(value, list | tuple):
            return [self.encode(item, depth + 1) for item in value]
        if isinstance(value, dict):
            out = {}
            for key, item in value.items():
                if not isinstance(key, str):
                    raise _Unsupported(f"dict key {key!r} is not a string")
                if key.startswith(RESERVED):
                    raise _Unsupported(f"dict key {key!r} is reserved")
                out[key] = self.encode(item, depth + 1)
            return out
        module = type(value).__module__.split(".")[0]
        if module == "numpy":
            import numpy as np

            if isinstance(value, np.generic):
                return self.encode(value.item(), depth + 1)
            if isinstance(value, np.ndarray):
                return self.array(value)
        if module == "torch" and hasattr(value, "detach"):
            tensor = value.detach().cpu()
            if str(getattr(tensor, "dtype", "")) in ("torch.bfloat16", "torch.float16"):
                tensor = tensor.float()
            return self.array(tensor.numpy())
        if hasattr(value, "__array__"):
            return self.array(value)
        raise _Unsupported(f"a {type(value).__name__} is not plain data")


def _error(exc: BaseException) -> dict[str, str]:
    return {"type": type(exc).__name__, "message": str(exc)[:MESSAGE_CHARS]}


def _compile_targets(targets: list[str]) -> dict[str, str] | None:
    for target in targets:
        try:
            with open(target, "rb") as handle:
                source = handle.read()
            compile(source, target, "exec")
        except (SyntaxError, ValueError, RecursionError, MemoryError, OverflowError) as exc:
            error = _error(exc)
            if isinstance(exc, ValueError):  # NUL bytes: a SyntaxError on newer Pythons
                error["type"] = "SyntaxError"
            if isinstance(exc, SyntaxError):
                error["message"] = f"{os.path.relpath(target)}:{exc.lineno}: {exc.msg}"
            return error
    return None


def _load(path: str, name: str) -> object:
    spec = importlib.util.spec_from_file_location(name, path)
    if spec is None or spec.loader is None:
        raise ImportError(f"cannot load {path}")
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


def run(out_dir: str, targets: list[str], cases_dir: str) -> dict[str, object]:
    result: dict[str, object] = {"cases": {}, "modules": {}}
    cases: dict[str, object] = result["cases"]  # type: ignore[assignment]
    modules: dict[str, object] = result["modules"]  # type: ignore[assignment]
    compile_error = _compile_targets(targets)
    if compile_error is not None:
        result["compile_error"] = compile_error
        return result
    encoder = _Encoder()
    only = os.environ.get("RCB_ONLY_CASES")
    wanted = None if only is None else set(only.split(","))
    for file in sorted(os.listdir(cases_dir)):
        if not file.endswith(".py") or file.startswith("_"):
            continue
        rel = f"{os.path.basename(cases_dir)}/{file}"
        try:
            module = _load(os.path.join(cases_dir, file), f"rcb_case_{file[:-3]}")
        except BaseException as exc:  # the code under test failed at import
            if isinstance(exc, KeyboardInterrupt):
                raise
            modules[rel] = {"error": _error(exc)}
            traceback.print_exc()
            continue
        names = sorted(n for n in vars(module) if n.startswith("case_"))
        modules[rel] = {"cases": [n[len("case_") :] for n in names]}
        for attr in names:
            name = attr[len("case_") :]
            if wanted is not None and name not in wanted:
                continue
            try:
                value = getattr(module, attr)()
                cases[name] = {"value": encoder.encode(value)}
            except BaseException as exc:
                if isinstance(exc, KeyboardInterrupt):
                    raise
                cases[name] = {"error": _error(exc)}
                traceback.print_exc()
    if encoder.arrays:
        import numpy as np

        # Object arrays were refused above, so nothing here is pickled.
        np.savez(os.path.join(out_dir, "arrays.npz"), **encoder.arrays)  # type: ignore[arg-type]
    return result


def main(argv: list[str]) -> int:
    if "--cases" not in argv or argv.index("--cases") < 1 or len(argv) < argv.index("--cases") + 2:
        print("usage: python -m rcb_cases OUT_DIR TARGET ... --cases CASES_DIR", file=sys.stderr)
        return 2
    at = argv.index("--cases")
    cases_dir = argv[at + 1]
    out_dir, *targets = argv[:at]
    sys.setrecursionlimit(max(sys.getrecursionlimit(), 3000))
    result = run(out_dir, targets, cases_dir)
    text = json.dumps(result, allow_nan=False)
    with open(os.path.join(out_dir, "outputs.json"), "w", encoding="utf-8") as handle:
        handle.write(text)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
