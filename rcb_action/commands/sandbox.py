"""rcb sandbox: housekeeping for the sandboxes."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from rcb_action.commands._common import add_tasks_dir

ORDER = 90


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "sandbox",
        help="sandbox housekeeping: remove leftover containers, build a base image",
        description="Housekeeping for the Docker sandbox.",
    )
    actions = parser.add_subparsers(dest="sandbox_command", metavar="ACTION", required=True)
    gc = actions.add_parser(
        "gc",
        help="remove sandbox leftovers (workspaces, containers, volumes) of runs that are gone",
        description="Remove what a run killed before it could clean up (SIGKILL, a crash) left: "
        "the local sandbox's workspace folders (rcb-local-* in the temp folder, unmounted first) "
        "and Docker's containers, volumes and workspaces labelled rcb.sandbox, whose owning rcb "
        "process is no longer running (all of them, running or not, with --all). The local "
        "backend also does this for itself whenever it starts.",
    )
    gc.add_argument(
        "--all",
        action="store_true",
        help="remove every rcb workspace, container and volume, running or not",
    )
    gc.set_defaults(handler=run_gc)
    base = actions.add_parser(
        "build-base",
        help="build a Debian base image with python3 locally (no registry needed)",
        description="debootstrap a minimal Debian with python3 and import it into Docker. "
        "Then set RCB_BASE_IMAGE to the printed tag. Needs root and debootstrap.",
    )
    base.add_argument(
        "--tag", default="rcb-base:bookworm", help="image tag (default rcb-base:bookworm)"
    )
    base.add_argument("--mirror", default=None, help="Debian mirror (default: the one apt uses)")
    base.set_defaults(handler=run_build_base)

    images = actions.add_parser(
        "images",
        help="the environment images the selected tasks run in, and their cache key",
        description="Print (on Actions: set as outputs) 'tags', the rcb-env images the Docker "
        "sandbox runs the selected tasks in (each tag hashes its environment's requirements and "
        "the base image's id; the base image is pulled if missing), and 'key', "
        "rcb-images-<hash of the tags>: the Action caches the images under it.",
    )
    add_tasks_dir(images)
    images.add_argument("tasks", nargs="?", default=None, help="task id globs, comma-separated")
    images.set_defaults(handler=run_images)

    save = actions.add_parser("save", help="docker save images into a folder (one archive each)")
    save.add_argument("--dir", type=Path, required=True)
    save.add_argument("tags", nargs="*", help="image tags; those not here are left out")
    save.set_defaults(handler=run_save)

    load = actions.add_parser("load", help="docker load every archive of a folder")
    load.add_argument("--dir", type=Path, required=True)
    load.set_defaults(handler=run_load)

    gpu = actions.add_parser(
        "gpu-check",
        help="exit 1 unless the sandbox can hand this host's GPUs to a task",
        description="Check that this host has an NVIDIA GPU (/dev/nvidia0, ...) and that the "
        "sandbox passes it through (Docker: the NVIDIA container runtime is registered). A job "
        "meant to run GPU tasks runs this first, so that finding no GPU fails the job instead of "
        "skipping every GPU task and passing.",
    )
    gpu.add_argument("--sandbox", default="docker", help="docker (default) or local")
    gpu.set_defaults(handler=run_gpu_check)


def run_gc(args: argparse.Namespace) -> int:
    from rcb_action.errors import RcbError
    from rcb_action.sandbox import collect_workspaces, garbage_collect

    local = collect_workspaces("local", everything=args.all)
    print(f"rcb: removed {local} local sandbox workspace(s)", file=sys.stderr)
    try:
        containers, volumes = garbage_collect(everything=args.all)
    except RcbError as exc:  # no Docker here, so nothing of it to remove
        print(f"rcb: Docker skipped: {exc}", file=sys.stderr)
        return 0
    print(f"rcb: removed {containers} container(s) and {volumes} volume(s)", file=sys.stderr)
    return 0


def run_build_base(args: argparse.Namespace) -> int:
    from rcb_action.sandbox import build_base_image, docker_client

    image_id = build_base_image(docker_client(), args.tag, args.mirror)
    print(f"rcb: built {args.tag} ({image_id[:19]}); export RCB_BASE_IMAGE={args.tag}")
    return 0


def run_gpu_check(args: argparse.Namespace) -> int:
    from rcb_action.sandbox import get_backend

    backend = get_backend(args.sandbox)
    try:
        if not backend.gpus:
            print("rcb: no NVIDIA GPU on this host (no /dev/nvidia0)", file=sys.stderr)
            return 1
        gpus = backend.usable_gpus()
        if not gpus:
            print(
                f"rcb: --sandbox {args.sandbox}: this host has {len(backend.gpus)} GPU(s) but "
                "Docker here has no NVIDIA runtime (install nvidia-container-toolkit)",
                file=sys.stderr,
            )
            return 1
        print(f"rcb: --sandbox {args.sandbox} passes through {', '.join(gpus)}", file=sys.stderr)
        return 0
    finally:
        backend.close()


def run_images(args: argparse.Namespace) -> int:
    import hashlib

    from rcb_action.github import set_outputs
    from rcb_action.sandbox import docker_client, env_images
    from rcb_action.tasks import load_tasks, resolve_tasks_dir

    tasks = load_tasks(resolve_tasks_dir(args.tasks_dir), args.tasks)
    tags = env_images(docker_client(), tasks)
    digest = hashlib.sha256("\n".join(tags).encode()).hexdigest()[:20]
    set_outputs({"key": f"rcb-images-{digest}", "tags": " ".join(tags)})
    return 0


def run_save(args: argparse.Namespace) -> int:
    from rcb_action.github import set_outputs
    from rcb_action.sandbox import docker_client, save_images

    saved = save_images(docker_client(), args.tags, args.dir)
    print(f"rcb: saved {len(saved)} of {len(args.tags)} image(s) into {args.dir}", file=sys.stderr)
    if len(saved) == len(args.tags):
        set_outputs({"complete": "true"})
    return 0


def run_load(args: argparse.Namespace) -> int:
    from rcb_action.sandbox import docker_client, load_images

    loaded = load_images(docker_client(), args.dir)
    print(f"rcb: loaded {', '.join(loaded) or 'no image'} from {args.dir}", file=sys.stderr)
    return 0
