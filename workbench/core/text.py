"""Reading users' text files: UTF-8 with or without a BOM, and a bad byte named by line and column."""
from __future__ import annotations

from pathlib import Path

from .errors import InputError, display_path


def read_text(path: Path, what: str) -> str:
    """The text of a UTF-8 file (a BOM is allowed); anything else is an InputError that says
    which file, line and column, so the user can fix it (never a UnicodeDecodeError traceback)."""
    path = Path(path)
    shown = display_path(path)
    if not path.is_file():
        raise InputError(f"{what} not found: {shown}" + (" (it is a folder)" if path.is_dir() else ""))
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise InputError(f"{shown}: cannot read the {what}: {exc.strerror or exc}") from None
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        line = data[:exc.start].count(b"\n") + 1
        column = exc.start - (data.rfind(b"\n", 0, exc.start) + 1) + 1
        raise InputError(f"{shown}:{line}: column {column}: {what} is not UTF-8 (byte 0x{data[exc.start]:02x}); "
                         "save it as UTF-8") from None
