"""Task folders are data: plain files and folders only, read without following a link.

A task folder comes from a pull request. A symbolic link in it
(``tests/fixture.txt -> /proc/self/environ``) would copy host data into a sandbox
and from there into a record; a FIFO would hang the harness; a device node would
read the host's hardware. So a folder holding anything but regular files and
folders is refused, and every read opens its file without following a link
(``O_NOFOLLOW``, ``O_NONBLOCK``) and checks that what it opened is the regular
file it looked at, so a swap between the check and the read cannot leak either.
"""

from __future__ import annotations

import errno
import os
import stat
from pathlib import Path

from rcb_action.errors import TaskError

_KINDS = {
    stat.S_IFLNK: "a symbolic link",
    stat.S_IFIFO: "a FIFO",
    stat.S_IFSOCK: "a socket",
    stat.S_IFCHR: "a character device",
    stat.S_IFBLK: "a block device",
}


def not_plain(path: Path | str, mode: int) -> TaskError:
    """The one-line error for ``path``, which is not a regular file or folder."""
    kind = _KINDS.get(stat.S_IFMT(mode), "not a regular file")
    return TaskError(f"{path} is {kind}: task folders hold plain files and folders only")


def check_plain_tree(folder: Path) -> None:
    """Refuse ``folder`` if it, or anything under it, is not a regular file or folder.

    Nothing is followed: the walk lists entries with ``lstat``. A missing folder
    passes (the caller reports missing files in its own words).

    Raises:
        TaskError: one line naming the first such entry (a symbolic link, FIFO,
            socket or device) or a folder that cannot be listed.
    """
    try:
        mode = os.lstat(folder).st_mode
    except FileNotFoundError:
        return
    if not stat.S_ISDIR(mode):
        raise not_plain(folder, mode)

    def unreadable(exc: OSError) -> None:
        raise TaskError(f"{exc.filename}: cannot be listed ({exc.strerror})")

    for dirpath, dirnames, filenames in os.walk(folder, onerror=unreadable, followlinks=False):
        dirnames.sort()
        for name in sorted(dirnames + filenames):
            path = Path(dirpath, name)
            mode = os.lstat(path).st_mode
            if not (stat.S_ISDIR(mode) or stat.S_ISREG(mode)):
                raise not_plain(path, mode)


def read_plain_file(path: Path) -> bytes:
    """The bytes of ``path``, which must be a regular file reached without a link.

    The file is opened with ``O_NOFOLLOW`` (a link as the last part fails) and
    ``O_NONBLOCK`` (a FIFO cannot hang the open), and what was opened must be the
    regular file ``lstat`` saw. Folders above ``path`` are trusted to be checked
    by :func:`check_plain_tree`.

    Raises:
        TaskError: ``path`` is a link, FIFO, socket, device or folder.
        FileNotFoundError: ``path`` does not exist.
    """
    before = os.lstat(path)
    if not stat.S_ISREG(before.st_mode):
        if stat.S_ISDIR(before.st_mode):
            raise TaskError(f"{path} is a folder: expected a file")
        raise not_plain(path, before.st_mode)
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC)
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            raise not_plain(path, stat.S_IFLNK) from None
        raise
    try:
        opened = os.fstat(fd)
        if not stat.S_ISREG(opened.st_mode):
            raise not_plain(path, opened.st_mode)
        if (opened.st_dev, opened.st_ino) != (before.st_dev, before.st_ino):
            raise TaskError(f"{path} changed while it was read: task folders must hold still")
        chunks = []
        while chunk := os.read(fd, 1 << 20):
            chunks.append(chunk)
        return b"".join(chunks)
    finally:
        os.close(fd)
