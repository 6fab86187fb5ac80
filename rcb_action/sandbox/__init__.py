"""Sandboxes: where model-written code runs. One small interface, backends by name.

``local`` runs under bubblewrap when present (a plain subprocess with rlimits and a
loud warning otherwise); ``docker`` runs in a warm container per task.
"""

from rcb_action.sandbox._base import (
    ExecResult,
    Limits,
    Sandbox,
    SandboxBackend,
    UnsafeFileError,
    host_gpus,
)
from rcb_action.sandbox._base_image import build_base_image
from rcb_action.sandbox._docker import docker_client, garbage_collect
from rcb_action.sandbox._envs import EnvironmentBuildError, build_venv, canonical_name, env_key
from rcb_action.sandbox._files import collect_workspaces
from rcb_action.sandbox._images import env_images, load_images, save_images
from rcb_action.sandbox._phases import CasesRaw, PytestRaw, run_cases, run_pytest
from rcb_action.sandbox._registry import BACKENDS, get_backend

__all__ = [
    "BACKENDS",
    "CasesRaw",
    "EnvironmentBuildError",
    "ExecResult",
    "Limits",
    "PytestRaw",
    "Sandbox",
    "SandboxBackend",
    "UnsafeFileError",
    "build_base_image",
    "build_venv",
    "canonical_name",
    "collect_workspaces",
    "docker_client",
    "env_images",
    "env_key",
    "garbage_collect",
    "get_backend",
    "host_gpus",
    "load_images",
    "run_cases",
    "run_pytest",
    "save_images",
]
