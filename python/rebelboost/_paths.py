"""The one check every reader and writer of a path runs before touching the file (the core's
``io::check_path`` and ``io::open_regular`` do the same for model files).

A path must be a str, bytes or os.PathLike without a NUL byte (the OS would cut the name there, so
``"m.rbm\\0junk"`` would read ``m.rbm``), and name a regular file: a directory, FIFO, socket or device is
refused before it is opened, so a reader never waits on a FIFO that no one writes.
"""

from __future__ import annotations

import os
import stat

__all__ = ["check_path", "open_regular"]

_KINDS = ((stat.S_ISDIR, "a directory"), (stat.S_ISFIFO, "a FIFO"), (stat.S_ISSOCK, "a socket"),
          (stat.S_ISCHR, "a character device"), (stat.S_ISBLK, "a block device"))


def _not_regular(path, what, reading, mode):
    kind = next((name for test, name in _KINDS if test(mode)), "not a regular file")
    verb = "read" if reading else "write"
    return OSError(f"cannot {verb} {what} '{path}': not a regular file ({kind})")


def check_path(path, what, reading):
    """``path`` as a str, checked: TypeError for another type, ValueError for an empty path or one holding
    a NUL byte, OSError when it exists and is not a regular file (for a writer, a symbolic link is allowed:
    the atomic rename replaces the link). A missing file passes: opening it reports that."""
    try:
        path = os.fspath(path)
    except TypeError:
        raise TypeError(f"{what} path must be a str or os.PathLike, got {type(path).__name__}") from None
    if isinstance(path, bytes):
        path = os.fsdecode(path)
    if not path:
        raise ValueError(f"{what} path is empty")
    nul = path.find("\0")
    if nul >= 0:
        raise ValueError(f"{what} path holds a NUL byte at position {nul} (the OS would cut the name there: "
                         f"{path[:nul]!r})")
    try:
        mode = (os.stat if reading else os.lstat)(path).st_mode
    except (OSError, ValueError):
        return path
    if not stat.S_ISREG(mode) and (reading or not stat.S_ISLNK(mode)):
        raise _not_regular(path, what, reading, mode)
    return path


def open_regular(path, what):
    """A binary file object for reading ``path`` (checked as above), opened without blocking (O_NONBLOCK)
    and fstat()ed after opening, so a FIFO swapped in between the check and the open is refused too."""
    path = check_path(path, what, reading=True)
    fd = os.open(path, os.O_RDONLY | os.O_CLOEXEC | os.O_NONBLOCK | getattr(os, "O_NOCTTY", 0))
    try:
        mode = os.fstat(fd).st_mode
        if not stat.S_ISREG(mode):
            raise _not_regular(path, what, True, mode)
        os.set_blocking(fd, True)
        return os.fdopen(fd, "rb")
    except BaseException:
        os.close(fd)
        raise
