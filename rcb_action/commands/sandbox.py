"""rcb sandbox: housekeeping for the sandboxes."""

from __future__ import annotations

import argparse
import sys

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
        help="remove rcb containers and volumes whose run is gone",
        description="Remove containers and volumes labelled rcb.sandbox whose owning rcb process "
        "is no longer running (all of them with --all).",
    )
    gc.add_argument(
        "--all", action="store_true", help="remove every rcb container and volume, running or not"
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
    from rcb_action.sandbox import garbage_collect

    containers, volumes = garbage_collect(everything=args.all)
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
