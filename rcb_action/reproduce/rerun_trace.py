"""Installed as ``sitecustomize`` for the harness's rerun of an attempt (never imported
by rcb itself): records which code of the attempt's own files starts running.

Every Python process of the rerun imports it at start-up (``PYTHONPATH`` names its
folder). The first time a code object whose file lies under ``RCB_TRACE_ROOT`` starts
(a module, a function, a class body), one line ``file<TAB>first line<TAB>name`` is
appended to ``RCB_TRACE_FILE``, at once, so a process that ends by ``os._exit`` or a
signal still leaves what it ran. Nothing else is traced: C calls and code outside the
project return at the first test.

With ``RCB_READ_FILE`` set, an audit hook (which, once added, no code of the process can
remove) appends the path of every file under the project's ``data/`` folder that is
opened, once per path, relative to the project (``data/train/w00.npy``): the harness
hashes those files itself to know which examples each split the run read.
"""

import os
import sys
import threading


def _append(path, text):
    """One write in append mode, at once: what a process that dies next still leaves."""
    fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
    try:
        os.write(fd, text.encode("utf-8", "replace"))
    finally:
        os.close(fd)


def _install() -> None:
    root, out = os.environ.get("RCB_TRACE_ROOT", ""), os.environ.get("RCB_TRACE_FILE", "")
    if not root or not out:
        return
    root = root.rstrip("/") + "/"
    seen = set()

    def profile(frame, event, arg):
        if event != "call":
            return
        code = frame.f_code
        if code in seen:
            return
        seen.add(code)
        name = code.co_filename
        if name.startswith("<"):  # frozen modules, exec'd strings
            return
        if not os.path.isabs(name):
            name = os.path.join(os.getcwd(), name)
        if not name.startswith(root) or "/.venv/" in name:
            return
        _append(out, f"{name[len(root) :]}\t{code.co_firstlineno}\t{code.co_name}\n")

    sys.setprofile(profile)
    threading.setprofile(profile)

    reads = os.environ.get("RCB_READ_FILE", "")
    if reads:
        data, opened = root + "data/", set()

        def audit(event, args):
            if event != "open" or isinstance(args[0], int) or args[0] is None:
                return
            try:
                path = os.path.normpath(os.path.join(os.getcwd(), os.fsdecode(args[0])))
            except (TypeError, ValueError):
                return
            if not path.startswith(data) or path in opened:
                return
            opened.add(path)
            _append(reads, path[len(root) :] + "\n")

        sys.addaudithook(audit)


_install()
