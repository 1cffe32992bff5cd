"""The folder a build writes its release in before moving it into place (issue 55).

Each build stages in `exports/.build-XXXX/`, beside `exports/.build-XXXX.lock`, a file it holds
an exclusive lock on (flock) from before the folder exists until after it is gone. A build that
is killed leaves both behind, and the kernel drops its lock; so each build, before it stages,
removes every staging folder whose lock it can take (its owner is gone) or that has no lock file
at all (left by a build from before locks), and leaves alone the folders of builds still running
beside it.
"""

from __future__ import annotations

import fcntl
import os
import shutil
import tempfile
from contextlib import contextmanager
from pathlib import Path

PREFIX = ".build-"
LOCK = ".lock"


def _held(fd: int, path: Path) -> bool:
    """Whether `path` still names the file open at `fd` (no one removed it before the lock was taken)."""
    try:
        return os.path.samestat(os.stat(path), os.fstat(fd))
    except OSError:
        return False


def remove_stale(folder: Path) -> list[str]:
    """Remove the staging folders in `folder` whose build is gone; returns their names."""
    removed = []
    for lock in sorted(folder.glob(f"{PREFIX}*{LOCK}")):
        try:
            fd = os.open(lock, os.O_RDWR)
        except OSError:
            continue  # removed meanwhile by another build's sweep
        try:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except OSError:
                continue  # its build is running
            if _held(fd, lock):
                staged = lock.with_name(lock.name[: -len(LOCK)])
                shutil.rmtree(staged, ignore_errors=True)  # the folder first: one never lacks its lock while in use
                lock.unlink(missing_ok=True)
                removed.append(staged.name)
        finally:
            os.close(fd)
    for staged in sorted(folder.glob(f"{PREFIX}*")):
        if staged.is_dir() and not staged.with_name(staged.name + LOCK).exists():
            shutil.rmtree(staged, ignore_errors=True)
            removed.append(staged.name)
    return removed


@contextmanager
def staging_folder(folder: Path | None):
    """A new, private staging folder in `folder` (the system's temporary folder where None), its
    lock held while the block runs; removed after it, unless the block moved it away."""
    if folder is None:
        staged = Path(tempfile.mkdtemp(prefix=PREFIX))
        try:
            yield staged
        finally:
            shutil.rmtree(staged, ignore_errors=True)
        return
    remove_stale(folder)
    while True:
        fd, name = tempfile.mkstemp(prefix=PREFIX, suffix=LOCK, dir=folder)
        lock = Path(name)
        fcntl.flock(fd, fcntl.LOCK_EX)
        if _held(fd, lock):  # not swept away between its creation and the lock
            break
        os.close(fd)
    staged = lock.with_name(lock.name[: -len(LOCK)])
    try:
        staged.mkdir(mode=0o700)
        yield staged
    finally:
        shutil.rmtree(staged, ignore_errors=True)
        lock.unlink(missing_ok=True)
        os.close(fd)
