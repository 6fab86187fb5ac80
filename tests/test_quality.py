"""The code base stays ruff-clean, formatted and type-checked."""

import shutil
import subprocess
import sys

import pytest
from conftest import ROOT


@pytest.mark.parametrize(
    "command",
    [["ruff", "check", "."], ["ruff", "format", "--check", "."], [sys.executable, "-m", "mypy"]],
    ids=["ruff-check", "ruff-format", "mypy"],
)
def test_tool_is_clean(command):
    if shutil.which(command[0]) is None and command[0] != sys.executable:
        pytest.skip(f"{command[0]} is not installed (pip install -e '.[test]')")
    result = subprocess.run(command, cwd=ROOT, capture_output=True, text=True)
    assert result.returncode == 0, result.stdout + result.stderr
