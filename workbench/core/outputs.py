"""Output files: checked before any work, then written atomically.

`check_outputs` runs before a model loads: an output that is an input (or inside an input
folder), two outputs on one path, or a folder that cannot be created or written is refused in
one line, so no hour of scoring ends in a lost or clobbered file.

`AtomicFile` (and `atomic_write_bytes`/`atomic_write_text`, which every writer uses) writes a
temporary file beside the target and renames it into place, removing it on any failure, so a
reader sees the old file or the new one, never a torn one. A path that exists and is not a
regular file (/dev/null, a FIFO, a terminal, /dev/stdout) is opened and written as a shell
redirect would, never renamed over: renaming over /dev/null as root would replace the device.

Pure standard library: a release's evaluate.py carries it verbatim.
"""

from __future__ import annotations

import json
import math
import numbers
import os
import stat
import tempfile
from pathlib import Path

from .errors import InputError, display_path

# Paths under these are the system's devices and process files (/dev/stdout -> /proc/self/fd/1):
# written through even where they resolve to a regular file, so a redirect stays the redirect.
SPECIAL = ("/dev/", "/proc/")


def writes_through(path: Path) -> bool:
    """Whether `path` is written in place rather than replaced: it exists and is not a regular
    file or a folder (a device, FIFO or socket), or it is an existing device or process file."""
    try:
        mode = os.stat(path).st_mode
    except OSError:
        return False
    if stat.S_ISDIR(mode):
        return False
    return not stat.S_ISREG(mode) or os.path.abspath(os.path.expanduser(path)).startswith(SPECIAL)


def _replaced(path: Path) -> Path:
    """The file a rename replaces: a symlink's target (the link stays a link), else the path."""
    return Path(os.path.realpath(path)) if path.is_symlink() else path


class AtomicFile:
    """A binary file written under `path`'s name only when complete (see the module docstring).

    Use as `with AtomicFile(path) as f: f.write(...)`, or call `commit()`/`abort()` for a file
    written in pieces (a streamed table)."""

    def __init__(self, path: Path):
        self.path = Path(path)
        self.tmp: Path | None = None
        if writes_through(self.path):
            self.target = self.path
            self.file = open(self.path, "wb")
            return
        self.target = _replaced(self.path)
        self.target.parent.mkdir(parents=True, exist_ok=True)
        self.tmp = self.target.with_name(f".{self.target.name}.{os.getpid()}.tmp")
        self.file = open(self.tmp, "wb")

    def write(self, data: bytes) -> int:
        return self.file.write(data)

    def commit(self) -> None:
        """Flush and rename into place; on any failure the temporary file is removed."""
        try:
            self.file.flush()
            if self.tmp is not None:
                os.fsync(self.file.fileno())
            self.file.close()
            if self.tmp is not None:
                os.replace(self.tmp, self.target)
        except BaseException:
            self.abort()
            raise

    def abort(self) -> None:
        """Close and remove the temporary file; the target is left as it was."""
        try:
            self.file.close()
        except OSError:
            pass
        if self.tmp is not None:
            self.tmp.unlink(missing_ok=True)

    def __enter__(self):
        return self.file

    def __exit__(self, kind, value, trace) -> None:
        if kind is None:
            self.commit()
        else:
            self.abort()


def finite(value):
    """`value` (dicts, lists, tuples) with every number that is not finite (NaN, ±infinity: a figure
    that divides by zero) as None: JSON has no such numbers, and a reader's parser refuses them."""
    if isinstance(value, dict):
        return {k: finite(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [finite(v) for v in value]
    if isinstance(value, numbers.Real) and not isinstance(value, numbers.Integral) and not math.isfinite(value):
        return None
    return value


def json_text(value, **options) -> str:
    """JSON as every result file is written: a number that is not finite is null (`finite`), never
    `NaN` or `Infinity`; `options` as json.dumps takes them."""
    return json.dumps(finite(value), allow_nan=False, **options)


def atomic_write_bytes(path: Path, data: bytes) -> None:
    with AtomicFile(Path(path)) as f:
        f.write(data)


def atomic_write_text(path: Path, text: str) -> None:
    atomic_write_bytes(path, text.encode("utf-8"))


def _shown(path: Path) -> str:
    """The path as the user gave it (a link not followed), relative to the working directory."""
    if not path.is_absolute():
        return str(path)
    for here in (Path.cwd(), Path.cwd().resolve()):
        if path.is_relative_to(here):
            return str(path.relative_to(here))
    return str(path)


def _real(path: Path) -> Path:
    return Path(os.path.realpath(os.path.expanduser(path)))


def _identity(path: Path) -> tuple[int, int] | None:
    """(device, inode) of an existing file, so a hard link to an input is caught too."""
    try:
        st = os.stat(path)
    except OSError:
        return None
    return (st.st_dev, st.st_ino) if stat.S_ISREG(st.st_mode) else None


def _device(path: Path) -> bool:
    try:
        return stat.S_ISCHR(os.stat(path).st_mode)
    except OSError:
        return False


def check_outputs(outputs: list[tuple[str, Path | None, bool]], inputs: list[tuple[str, Path | None]]) -> list[Path]:
    """Refuse, before any work, an output that would destroy an input or another output, or
    that cannot be written; create the outputs' folders, and return those it created (the
    topmost of each), which `remove_empty` takes away again when the work fails.

    `outputs`: (what names it, e.g. "--json"; the path or None; True for a folder of files such
    as --plots). `inputs`: (what it is, e.g. "the dataset"; its path or None). An input folder
    protects everything inside it; an input that does not exist yet (a cache) its own path."""
    protected = []
    for what, path in inputs:
        if path is None:
            continue
        path = Path(path).expanduser()
        protected.append((what, path, _real(path), _identity(path), path.is_dir()))
    seen: dict[Path, str] = {}
    for flag, path, folder in outputs:
        if path is None:
            continue
        path = Path(path).expanduser()
        shown = _shown(path)
        real = _real(path)
        ident = None if writes_through(path) else _identity(path)
        for what, given, key, key_ident, is_dir in protected:  # the input itself first: the plainest message
            if real == key or (ident is not None and ident == key_ident):
                raise InputError(
                    f"{flag} {shown}: that is {what} {display_path(given)}; an output must not overwrite an input"
                )
        for what, given, key, key_ident, is_dir in protected:
            if is_dir and real.is_relative_to(key):
                raise InputError(f"{flag} {shown}: inside {what} {display_path(given)}; write outputs outside it")
        if real in seen and not _device(path):  # /dev/null twice discards both
            raise InputError(f"{seen[real]} and {flag} both name {shown}; give each output its own path")
        seen[real] = flag
    made = []
    for flag, path, folder in outputs:  # only when none is refused: no folder made for nothing
        if path is not None:
            made += _ready(flag, Path(path).expanduser(), folder)
    return made


def remove_empty(folders: list[Path]) -> None:
    """Remove the folders `check_outputs` created where nothing was written into them (a run that
    failed leaves no empty --plots folder); a folder holding any file is left as it is."""
    for top in folders:
        if not top.is_dir():
            continue
        for below in sorted((p for p in top.rglob("*") if p.is_dir()), key=lambda p: len(p.parts), reverse=True):
            try:
                below.rmdir()
            except OSError:  # not empty
                pass
        try:
            top.rmdir()
        except OSError:
            pass


def _ready(flag: str, path: Path, folder: bool) -> list[Path]:
    """The output can be written: its folder exists (created here) and takes a new file; returns
    the topmost folder created, if any."""
    shown = _shown(path)
    target = _real(path)
    if folder:
        if target.exists() and not target.is_dir():
            raise InputError(f"{flag} {shown}: is a file, not a folder; {flag} names the folder charts go into")
        where = target
    elif writes_through(path):
        if not os.access(path, os.W_OK):
            raise InputError(f"{flag} {shown}: not writable")
        return []
    else:
        if target.is_dir():
            raise InputError(f"{flag} {shown}: is a folder; name a file")
        where = target.parent
    missing = [p for p in (where, *where.parents) if not p.exists()]
    try:
        where.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        blocker = next((p for p in (where, *where.parents) if p.exists() and not p.is_dir()), None)
        why = f"{display_path(blocker)} is a file, not a folder" if blocker else (exc.strerror or str(exc))
        raise InputError(f"{flag} {shown}: cannot create the folder {display_path(where)}: {why}") from None
    try:
        fd, probe = tempfile.mkstemp(prefix=".workbench-", suffix=".probe", dir=where)
        os.close(fd)
        os.unlink(probe)
    except OSError as exc:
        raise InputError(
            f"{flag} {shown}: cannot write in the folder {display_path(where)}: {exc.strerror or exc}"
        ) from None
    return missing[-1:]
