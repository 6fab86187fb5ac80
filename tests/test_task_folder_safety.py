"""Task folders are data: no link or special file is followed, environments build
without running a task's code on this machine, and no host secret reaches a build."""

from __future__ import annotations

import io
import os
import shutil
import subprocess
import sys
import tarfile
import threading
import zipfile
from pathlib import Path

import pytest
from conftest import FIXTURE_TASKS

from rcb_action.errors import TaskError
from rcb_action.sandbox import EnvironmentBuildError, build_venv
from rcb_action.sandbox._envs import (
    BUILD_UID,
    build_confined,
    build_env,
    build_sandbox,
    requirements_of,
)
from rcb_action.sandbox._images import PipSettings, _context
from rcb_action.tasks import load_task

CANARY = "sk-rcb-canary-3f9c1e"
CHECKOUT = Path(__file__).parent / "fixtures" / "researchcodebench"


@pytest.fixture
def canary(monkeypatch: pytest.MonkeyPatch) -> str:
    """A host secret in this process's environment, as an evaluate workflow has."""
    monkeypatch.setenv("OPENAI_API_KEY", CANARY)
    monkeypatch.setenv("RCB_TEST_CANARY", CANARY)
    return CANARY


@pytest.fixture
def private_cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A cache of its own, so a build here neither reuses nor disturbs the shared venvs."""
    cache = tmp_path / "cache"
    monkeypatch.setenv("RCB_CACHE_DIR", str(cache))
    return cache


def _files_hold(folder: Path, needle: str) -> list[Path]:
    if not folder.exists():
        return []
    return [p for p in folder.rglob("*") if p.is_file() and needle.encode() in p.read_bytes()]


# --- links and special files -----------------------------------------------------------


@pytest.mark.parametrize("rel", ["tests/fixture.txt", "src/fixture.txt"])
def test_a_link_to_host_data_is_refused_and_never_read(cli, fixture_tasks, tmp_path, canary, rel):
    task = fixture_tasks / "toy"
    (task / rel).symlink_to("/proc/self/environ")
    with pytest.raises(TaskError) as info:
        load_task(task)
    assert str(info.value) == (
        f"{task / rel} is a symbolic link: task folders hold plain files and folders only"
    )

    code, out, err = cli("validate", task)
    assert code == 1
    assert f"{task / rel} is a symbolic link" in out + err
    results = tmp_path / "results"
    code, out2, err2 = cli(
        "evaluate", "--tasks-dir", fixture_tasks, "--tasks", "toy", "--model", "reference",
        "--out", results, "--no-progress",
    )  # fmt: skip
    assert code == 2
    assert f"{task / rel} is a symbolic link" in err2
    for text in (out, err, out2, err2):
        assert canary not in text
    assert _files_hold(results, canary) == []


def test_a_linked_folder_task_yaml_or_task_is_refused(fixture_tasks, tmp_path):
    toy = fixture_tasks / "toy"
    outside = tmp_path / "outside"
    outside.mkdir()
    (toy / "tests" / "data").symlink_to(outside, target_is_directory=True)
    with pytest.raises(TaskError, match=r"toy/tests/data is a symbolic link"):
        load_task(toy)
    (toy / "tests" / "data").unlink()

    yaml_text = (toy / "task.yaml").read_bytes()
    (outside / "task.yaml").write_bytes(yaml_text)
    (toy / "task.yaml").unlink()
    (toy / "task.yaml").symlink_to(outside / "task.yaml")
    with pytest.raises(TaskError, match=r"toy/task.yaml is a symbolic link"):
        load_task(toy)
    (toy / "task.yaml").unlink()
    (toy / "task.yaml").write_bytes(yaml_text)
    assert load_task(toy).id == "toy"

    linked = tmp_path / "linked" / "toy"
    linked.parent.mkdir()
    linked.symlink_to(toy, target_is_directory=True)
    with pytest.raises(TaskError, match=r"linked/toy is a symbolic link"):
        load_task(linked)


def test_a_fifo_is_refused_without_hanging(cli, fixture_tasks):
    task = fixture_tasks / "toy"
    os.mkfifo(task / "tests" / "pipe")
    outcome: dict[str, BaseException] = {}

    def load() -> None:
        try:
            load_task(task)
        except BaseException as exc:
            outcome["error"] = exc

    worker = threading.Thread(target=load, daemon=True)
    worker.start()
    worker.join(timeout=30)
    assert not worker.is_alive(), "loading a task with a FIFO hung"
    assert isinstance(outcome.get("error"), TaskError)
    assert str(outcome["error"]).endswith(
        "tests/pipe is a FIFO: task folders hold plain files and folders only"
    )
    code, out, _ = cli("validate", task)
    assert code == 1 and "tests/pipe is a FIFO" in out


@pytest.mark.skipif(os.geteuid() != 0, reason="making a device node needs root")
def test_a_device_node_is_refused(fixture_tasks):
    task = fixture_tasks / "toy"
    os.mknod(task / "src" / "null", 0o600 | 0o020000, os.makedev(1, 3))  # S_IFCHR: /dev/null
    with pytest.raises(TaskError, match=r"src/null is a character device"):
        load_task(task)


def test_a_socket_is_refused(fixture_tasks):
    import socket

    task = fixture_tasks / "toy"
    server = socket.socket(socket.AF_UNIX)
    try:
        server.bind(str(task / "src" / "sock"))
        with pytest.raises(TaskError, match=r"src/sock is a socket"):
            load_task(task)
    finally:
        server.close()


def test_a_linked_environment_is_refused(fixture_tasks, tmp_path):
    toy = fixture_tasks / "toy"
    envs = fixture_tasks / "_envs"
    elsewhere = tmp_path / "elsewhere"
    shutil.copytree(envs / "numpy", elsewhere / "numpy")

    (envs / "numpy" / "requirements.txt").unlink()
    (envs / "numpy" / "requirements.txt").symlink_to(elsewhere / "numpy" / "requirements.txt")
    with pytest.raises(TaskError, match=r"_envs/numpy/requirements.txt is a symbolic link"):
        load_task(toy)

    shutil.rmtree(envs / "numpy")
    (envs / "numpy").symlink_to(elsewhere / "numpy", target_is_directory=True)
    with pytest.raises(TaskError, match=r"_envs/numpy is a symbolic link"):
        load_task(toy)

    (envs / "numpy").unlink()
    envs.rmdir()
    envs.symlink_to(elsewhere, target_is_directory=True)
    with pytest.raises(TaskError, match=r"tasks/_envs is a symbolic link"):
        load_task(toy)


def test_the_environment_is_read_without_following_a_link(fixture_tasks, tmp_path):
    """The builders read requirements the same way: a link swapped in after loading is refused."""
    toy = load_task(fixture_tasks / "toy")
    requirements = toy.env_dir / "requirements.txt"
    requirements.unlink()
    requirements.symlink_to("/proc/self/environ")
    with pytest.raises(TaskError, match="is a symbolic link"):
        requirements_of(toy.env_dir)


# --- requirements: pinned index names only -----------------------------------------------


@pytest.mark.parametrize(
    ("line", "says"),
    [
        ("./localpkg", "is a path, URL or direct reference"),
        ("file:///tmp/localpkg", "is a path, URL or direct reference"),
        ("git+https://github.com/example/pkg", "is a path, URL or direct reference"),
        ("pkg @ https://example.org/pkg-1.0.tar.gz", "is a path, URL or direct reference"),
        ("-e .", "is a pip option"),
        ("-r other.txt", "is a pip option"),
        ("--index-url https://example.org/simple", "is a pip option"),
        ("numpy==2.2.6 --hash=sha256:00", "is a pip option"),
        ("pkg>=1", "is not pinned: write pkg==<version>"),
        ("pkg", "is not pinned: write pkg==<version>"),
        ("pkg==1.*", "is not pinned"),
        ("pkg==${OPENAI_API_KEY}", "names an environment variable"),
        ("pkg==1.0 \\", "a line continuation"),
        ("pkg==1.0+local.tar.gz", "cannot end like an archive"),
        ("pkg==1.0 ; __import__('os')", "environment marker"),
    ],
)
def test_requirements_other_than_pinned_names_are_refused(cli, fixture_tasks, line, says):
    requirements = fixture_tasks / "_envs" / "numpy" / "requirements.txt"
    requirements.write_text(f"numpy==2.2.6\n{line}\npytest==8.4.2\n")
    with pytest.raises(TaskError) as info:
        load_task(fixture_tasks / "toy")
    message = str(info.value)
    assert message.startswith(f"{requirements}:2: ")
    assert says in message
    assert "\n" not in message
    code, out, _ = cli("validate", fixture_tasks / "toy")
    assert code == 1 and f"{requirements}:2:" in out


def test_pinned_names_extras_markers_and_comments_load(fixture_tasks):
    requirements = fixture_tasks / "_envs" / "numpy" / "requirements.txt"
    requirements.write_text(
        "# the numerical stack\n"
        "\n"
        "numpy == 2.2.6  # a trailing comment\n"
        "Pytest[testing]==8.4.2\n"
        "torch==2.13.0+cpu ; platform_machine == 'x86_64' and (python_version >= \"3.11\")\n"
    )
    task = load_task(fixture_tasks / "toy")
    # pip gets the checked lines in canonical form, never the task's file.
    assert requirements_of(task.env_dir) == (
        "numpy==2.2.6\n"
        "Pytest[testing]==8.4.2\n"
        "torch==2.13.0+cpu ; platform_machine == 'x86_64' and ( python_version >= \"3.11\" )\n"
    )


def test_the_benchmark_environments_are_pinned():
    root = Path(__file__).resolve().parents[1]
    for requirements in [
        *sorted((root / "tasks" / "_envs").glob("*/requirements.txt")),
        *sorted((FIXTURE_TASKS / "_envs").glob("*/requirements.txt")),
    ]:
        text = requirements_of(requirements.parent)
        assert "pytest==" in text, requirements


def test_reproduction_packages_are_pinned_names(fixture_tasks, tmp_path):
    repro = tmp_path / "repro"
    shutil.copytree(FIXTURE_TASKS.parent / "repro_tasks", repro)
    task_yaml = repro / "repro-toy" / "task.yaml"
    text = task_yaml.read_text()
    task_yaml.write_text(text.replace("  runs: 5\n", "  runs: 5\n  packages: [./localpkg]\n"))
    with pytest.raises(TaskError, match=r"key 'reproduction.packages.0': './localpkg' is a path"):
        load_task(repro / "repro-toy")
    task_yaml.write_text(text.replace("  runs: 5\n", "  runs: 5\n  packages: [numpy==2.2.6]\n"))
    assert load_task(repro / "repro-toy").config.reproduction is not None


# --- the ResearchCodeBench importer --------------------------------------------------------


def test_import_stops_on_an_unpinned_shared_requirement(cli, tmp_path):
    checkout = tmp_path / "checkout"
    shutil.copytree(CHECKOUT, checkout)
    (checkout / "requirements.txt").write_text(
        "numpy==2.2.3\nappnope @ file:///home/conda/feedstock_root/work\nml_collections\n"
    )
    out = tmp_path / "imported"
    code, _, err = cli("import", "rcb", checkout, "--out", out)
    assert code == 2
    assert f"{checkout / 'requirements.txt'}:3: 'ml_collections' is not pinned" in err
    assert "--requirements" in err
    assert not out.exists()


def test_import_leaves_out_a_paper_with_an_unpinned_requirement(cli, tmp_path):
    checkout = tmp_path / "checkout"
    shutil.copytree(CHECKOUT, checkout)
    own = checkout / "pset" / "fixture-tex" / "paper2code_requirements.txt"
    own.write_text("einops==0.8.1\ngit+https://github.com/example/pkg\n")
    layers = checkout / "pset" / "fixture-tex" / "layers.py"
    layers.write_text("import pkg\n" + layers.read_text())  # only a git URL names it
    out = tmp_path / "imported"
    code, stdout, err = cli("import", "rcb", checkout, "--out", out)
    assert code == 1
    assert "imported 1 of 3 paper(s)" in stdout
    assert f"{own}:2: 'git+https://github.com/example/pkg' (a URL, not an index package)" in err
    assert load_task(out / "fixture-scaler").config.env == "researchcodebench"
    assert not (out / "fixture-tex").exists()


# --- builds run no package code on the host and see no host secret ------------------------


def _sdist(folder: Path, name: str, canary_file: Path) -> Path:
    """A source distribution whose setup.py writes ``canary_file`` when pip builds it."""
    folder.mkdir(parents=True, exist_ok=True)
    base = f"{name.replace('-', '_')}-1.0"
    setup = (
        "import pathlib\n"
        f"pathlib.Path({str(canary_file)!r}).write_text('setup.py ran on the host')\n"
        "from setuptools import setup\n"
        f"setup(name={name!r}, version='1.0')\n"
    )
    files = {
        f"{base}/setup.py": setup,
        f"{base}/PKG-INFO": f"Metadata-Version: 2.1\nName: {name}\nVersion: 1.0\n",
    }
    path = folder / f"{base}.tar.gz"
    with tarfile.open(path, "w:gz") as tar:
        for member, text in files.items():
            data = text.encode()
            info = tarfile.TarInfo(member)
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))
    return path


def _wheel(folder: Path, name: str, module: str = "") -> Path:
    """A pure wheel holding one module (its install runs no code)."""
    folder.mkdir(parents=True, exist_ok=True)
    dist = f"{name}-1.0.dist-info"
    files = {
        f"{name}/__init__.py": module,
        f"{dist}/METADATA": f"Metadata-Version: 2.1\nName: {name}\nVersion: 1.0\n",
        f"{dist}/WHEEL": "Wheel-Version: 1.0\nGenerator: rcb-tests\nRoot-Is-Purelib: true\nTag: py3-none-any\n",
    }
    files[f"{dist}/RECORD"] = "".join(f"{p},,\n" for p in [*files, f"{dist}/RECORD"])
    path = folder / f"{name}-1.0-py3-none-any.whl"
    with zipfile.ZipFile(path, "w") as archive:
        for member, text in files.items():
            archive.writestr(member, text)
    return path


def test_a_local_source_package_never_runs_on_the_host(tmp_path, private_cache, monkeypatch):
    links = tmp_path / "links"
    canary_file = tmp_path / "setup-py-ran"
    _sdist(links, "rcb-canary-sdist-probe", canary_file)
    # The fixture is live: pip left to itself runs this setup.py to read its metadata.
    subprocess.run(
        [sys.executable, "-m", "pip", "download", "--no-deps", "--no-build-isolation",
         "--no-index", "--find-links", str(links), "--dest", str(tmp_path / "control"),
         "rcb-canary-sdist-probe==1.0"],
        capture_output=True, check=False, timeout=300,
    )  # fmt: skip
    assert canary_file.exists()
    canary_file.unlink()

    env = tmp_path / "_envs" / "sdist-only"
    env.mkdir(parents=True)
    (env / "requirements.txt").write_text("rcb-canary-sdist-probe==1.0\npytest==8.4.2\n")
    monkeypatch.setenv("PIP_FIND_LINKS", str(links))
    with pytest.raises(EnvironmentBuildError) as info:
        build_venv(env)
    message = str(info.value)
    assert "\n" not in message
    assert "environment 'sdist-only' failed to build" in message
    assert "wheel" in message
    log = Path(message.rsplit("see ", 1)[1])
    assert "rcb-canary-sdist-probe" in log.read_text()
    assert not canary_file.exists()
    # Nothing half-made is left to be reused.
    assert [
        p.name
        for p in (private_cache / "venvs").iterdir()
        if not p.name.endswith((".log", ".lock"))
    ] == []


@pytest.mark.skipif(not build_confined(), reason="the build sandbox needs bubblewrap as root")
def test_the_build_sandbox_has_no_secret_no_network_and_one_writable_folder(tmp_path, canary):
    writable = tmp_path / "staging"
    writable.mkdir()
    os.chown(writable, BUILD_UID, BUILD_UID)
    readable = tmp_path / "wheels"
    readable.mkdir()
    (readable / "w.txt").write_text("wheel")
    probe = (
        "import os, socket, sys\n"
        "print('ENV', sorted(os.environ.items()))\n"
        "print('UID', os.getuid())\n"
        "open(os.path.join(sys.argv[1], 'made'), 'w').write('ok')\n"
        "for target in (os.path.join(sys.argv[2], 'x'), '/usr/rcb-x', '/etc/rcb-x'):\n"
        "    try:\n        open(target, 'w')\n        print('WROTE', target)\n"
        "    except OSError:\n        pass\n"
        "try:\n    socket.create_connection(('pypi.org', 443), timeout=3)\n    print('NET open')\n"
        "except OSError:\n    print('NET blocked')\n"
        "print('HOSTFILE', os.path.exists(sys.argv[3]))\n"
    )
    secret = tmp_path / "host-secret.txt"
    secret.write_text(CANARY)
    argv = build_sandbox(
        [sys.executable, "-c", probe, str(writable), str(readable), str(secret)],
        writable=writable,
        readable=[readable],
        python_prefix=sys.base_prefix,
    )
    result = subprocess.run(argv, env=build_env(), capture_output=True, text=True, timeout=60)
    assert result.returncode == 0, result.stderr
    assert canary not in result.stdout + result.stderr
    assert "OPENAI_API_KEY" not in result.stdout and "RCB_TEST_CANARY" not in result.stdout
    assert f"UID {BUILD_UID}" in result.stdout
    assert "WROTE" not in result.stdout
    assert "NET blocked" in result.stdout
    assert "HOSTFILE False" in result.stdout  # tmp_path is not in the build sandbox
    assert (writable / "made").read_text() == "ok"
    assert CANARY not in "".join(build_env().values())


@pytest.mark.skipif(not build_confined(), reason="the build sandbox needs bubblewrap as root")
def test_a_venv_is_installed_inside_the_sandbox_and_left_root_owned(
    tmp_path, private_cache, monkeypatch, canary
):
    links = tmp_path / "links"
    _wheel(links, "rcbprobe", "VALUE = 41 + 1\n")
    env = tmp_path / "_envs" / "probe"
    env.mkdir(parents=True)
    (env / "requirements.txt").write_text("rcbprobe==1.0\npytest==8.4.2\n")
    monkeypatch.setenv("PIP_FIND_LINKS", str(links))
    venv = build_venv(env)
    log = (private_cache / "venvs" / f"{venv.name}.log").read_text()
    install = next(line for line in log.splitlines() if " install " in line)
    assert install.startswith("$ ") and "--unshare-net" in install and "--clearenv" in install
    assert f"--reuid={BUILD_UID}" in install and "--no-index" in install
    assert canary not in log
    owners = {p.lstat().st_uid for p in [venv, *venv.rglob("*")]}
    assert owners == {os.geteuid()}
    probe = subprocess.run(
        [str(venv / "bin" / "python"), "-c", "import rcbprobe, pytest; print(rcbprobe.VALUE)"],
        capture_output=True, text=True, env=build_env(), timeout=60,
    )  # fmt: skip
    assert probe.stdout.strip() == "42", probe.stderr


# --- Docker -----------------------------------------------------------------------------------


def test_the_image_context_installs_wheels_only_and_holds_no_host_variable(tmp_path, canary):
    wheels = tmp_path / "wheels"
    _wheel(wheels, "rcbprobe")
    _sdist(wheels, "rcbprobe", tmp_path / "never")
    data, buildargs = _context(
        "rcbprobe==1.0\npytest==8.4.2\n", "rcb-base:test", PipSettings(find_links=[wheels])
    )
    assert buildargs == {}
    with tarfile.open(fileobj=io.BytesIO(data)) as tar:
        names = tar.getnames()
        dockerfile = tar.extractfile("Dockerfile").read().decode()  # type: ignore[union-attr]
    assert "--only-binary=:all:" in dockerfile
    assert names == sorted(
        ["Dockerfile", "requirements.txt", "wheels/rcbprobe-1.0-py3-none-any.whl"]
    )  # never the source distribution
    assert canary.encode() not in data


@pytest.mark.docker
def test_docker_build_refuses_unpinned_requirements_before_building(
    docker_client, docker_base_image, tmp_path, private_cache
):
    from rcb_action.sandbox._images import ensure_image

    env = tmp_path / "_envs" / "unpinned"
    env.mkdir(parents=True)
    (env / "requirements.txt").write_text("numpy==2.2.6\n./localpkg\n")
    with pytest.raises(TaskError, match=r"requirements.txt:2: './localpkg' is a path"):
        ensure_image(docker_client, env)
    assert docker_client.images.list(filters={"label": "rcb.env=unpinned"}) == []


@pytest.mark.docker
def test_docker_build_of_a_source_only_package_fails_and_runs_nothing(
    docker_client, docker_base_image, tmp_path, private_cache, monkeypatch, canary
):
    from rcb_action.sandbox._images import ensure_image

    links = tmp_path / "links"
    canary_file = tmp_path / "setup-py-ran"
    _sdist(links, "rcb-canary-sdist-probe", canary_file)
    env = tmp_path / "_envs" / "sdist-only-docker"
    env.mkdir(parents=True)
    (env / "requirements.txt").write_text("rcb-canary-sdist-probe==1.0\npytest==8.4.2\n")
    monkeypatch.setenv("RCB_PIP_FIND_LINKS", str(links))
    with pytest.raises(EnvironmentBuildError) as info:
        ensure_image(docker_client, env)
    message = str(info.value)
    assert "environment 'sdist-only-docker' failed to build" in message and "wheel" in message
    log = Path(message.rsplit("see ", 1)[1]).read_text()
    assert "rcb-canary-sdist-probe" in log
    assert canary not in log
    assert not canary_file.exists()
