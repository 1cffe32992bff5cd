"""One error hierarchy for the whole tool.

Every problem a user can cause is reported as a :class:`Problem` that names the file, the
field path and (where known) the line, so the CLI can print it and exit with code 2 instead
of showing a traceback.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True, order=True)
class Problem:
    """A single user-facing problem: where it is and what is wrong."""

    file: str
    line: int | None
    field: str
    message: str
    severity: str = "error"  # "error" or "warning"

    def __str__(self) -> str:
        where = self.file if self.line is None else f"{self.file}:{self.line}"
        field = f" {self.field}:" if self.field else ""
        tag = " warning:" if self.severity == "warning" else ""
        return f"{where}:{tag}{field} {self.message}"


class WorkbenchError(Exception):
    """Base class of every error the CLI reports as a message (exit code 2)."""

    exit_code = 2

    def __init__(self, message: str, problems: list[Problem] | None = None):
        super().__init__(message)
        self.problems = list(problems or [])

    def __str__(self) -> str:
        head = super().__str__()
        if not self.problems:
            return head
        return "\n".join([head, *(f"  {p}" for p in self.problems)])


class ConfigError(WorkbenchError):
    """workbench.toml is missing, unreadable or invalid."""


class TemplateError(WorkbenchError):
    """One or more template files are invalid."""


class InputError(WorkbenchError):
    """A data file given on the command line is missing or malformed."""


class StageError(WorkbenchError):
    """A pipeline stage cannot run (for example its input stage has not run yet)."""


class ModelError(WorkbenchError):
    """A model cannot be loaded or does not fit the task."""


class KindError(WorkbenchError):
    """A kind's own code raised while it ran (its evaluator's `item` or `score`, say): one line
    naming the kind, the item it was at and the error, not a traceback."""


def one_line(exc: BaseException) -> str:
    """An exception as one line: its type and the first line of its message (a SyntaxError's
    says the file and line)."""
    lines = str(exc).strip().splitlines()
    return f"{type(exc).__name__}: {lines[0]}" if lines else type(exc).__name__


def did_you_mean(name, known) -> str:
    """ "did you mean X? " for the known name nearest to a misspelt `name`, else ""."""
    import difflib

    near = difflib.get_close_matches(str(name), sorted(map(str, known)), n=1, cutoff=0.6)
    return f"did you mean {near[0]}? " if near else ""


def display_path(path: str | Path) -> str:
    """Paths in messages are shown relative to the working directory when possible."""
    p = Path(path)
    try:
        return str(p.resolve().relative_to(Path.cwd().resolve()))
    except ValueError:
        return str(p)
