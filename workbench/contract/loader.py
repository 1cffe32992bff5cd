"""The one guarded way into a kind's code: its modules (KIND, evaluator, standalone, lm-eval
task, example, demo) are imported, and its hooks that may import more (detect, stages) are
called, only through here.

A plugin is someone else's code: an ImportError, a SyntaxError or any exception its import or
its `detect` raises must cost only that kind. So every failure becomes a `KindBroken` — a
ConfigError (exit 2) whose one line names the kind, its package and version, the module and the
error — which the kind's own commands report as it is and which everything that merely looks at
every kind (detection, `workbench kinds`) turns into a warning and goes on without that kind.

A plugin's module is imported in a thread of its own and waited for at most
WORKBENCH_PLUGIN_TIMEOUT seconds (default 30): one that loops or blocks at import is reported as
broken, never waited on forever (the thread is left behind, and ends with the process).
"""

from __future__ import annotations

import importlib
import os
import sys
import threading
from types import ModuleType
from typing import Any, Callable

from ..core.errors import ConfigError, WorkbenchError, one_line


def describe(exc: BaseException) -> str:
    """An exception as one line (core.errors.one_line)."""
    return one_line(exc)


def origin(kind: Any) -> str:
    """Where a kind comes from, as messages name it ("bbq-lite 0.1.0", "workbench 0.1.0")."""
    return " ".join(p for p in (getattr(kind, "package", ""), getattr(kind, "version", "")) if p) or "?"


class KindBroken(ConfigError):
    """A kind's code failed to import or raised; the message is one line naming kind, module and error."""

    def __init__(self, kind: Any, what: str, exc: BaseException | str):
        self.kind = getattr(kind, "name", str(kind))
        self.what = what
        self.reason = exc if isinstance(exc, str) else describe(exc)
        super().__init__(f"kind {self.kind!r} ({origin(kind)}): {what}: {self.reason}")


TIMEOUT_VARIABLE = "WORKBENCH_PLUGIN_TIMEOUT"
DEFAULT_TIMEOUT = 30.0  # seconds: a plugin that imports torch at its top on a busy machine still loads


def plugin_timeout() -> float:
    """How long a plugin's import is waited for (WORKBENCH_PLUGIN_TIMEOUT, seconds)."""
    text = os.environ.get(TIMEOUT_VARIABLE, "")
    try:
        value = float(text) if text.strip() else DEFAULT_TIMEOUT
    except ValueError:
        raise ConfigError(f"{TIMEOUT_VARIABLE}={text!r}: a number of seconds, e.g. 30") from None
    if not value > 0:
        raise ConfigError(f"{TIMEOUT_VARIABLE}={text!r}: a number of seconds above 0, e.g. 30")
    return value


_HUNG: dict[str, str] = {}  # module -> why: imports that never finished in this process


def is_plugin(kind: Any) -> bool:
    """Whether the kind comes from another package than workbench (its code is not ours)."""
    return getattr(kind, "package", "workbench") != "workbench"


def import_module(kind: Any, name: str, role: str) -> ModuleType:
    """Import module `name`, the kind's `role` module ("evaluator", "standalone", ...); any failure
    (SystemExit and KeyboardInterrupt included: a plugin that exits on import) is a KindBroken,
    and so is a plugin's import that does not finish in `plugin_timeout()` seconds."""
    what = f"its {role} module {name} cannot be imported"
    if name in _HUNG:  # still importing in its thread: importing it again would wait on that thread
        raise KindBroken(kind, what, _HUNG[name])
    if not is_plugin(kind):
        try:
            return importlib.import_module(name)
        except (Exception, SystemExit) as exc:  # noqa: BLE001 -- whatever a plugin raises is its own failure
            raise KindBroken(kind, what, exc) from exc
    timeout = plugin_timeout()
    done: dict[str, Any] = {}

    def run() -> None:
        try:
            done["module"] = importlib.import_module(name)
        except BaseException as exc:  # noqa: BLE001 -- reported by the waiting thread, as the plugin's failure
            done["error"] = exc

    worker = threading.Thread(target=run, name=f"import {name}", daemon=True)
    worker.start()
    worker.join(timeout)
    if worker.is_alive():
        _HUNG[name] = f"its import did not finish in {timeout:g} s ({TIMEOUT_VARIABLE} sets the wait)"
        raise KindBroken(kind, what, _HUNG[name])
    if "error" in done:
        raise KindBroken(kind, what, done["error"]) from done["error"]
    return done["module"]


def call(kind: Any, what: str, function: Callable, *args, own_errors: bool = True, **kwargs):
    """Run one of the kind's hooks. With own_errors, a WorkbenchError it raises on purpose (a
    one-line verdict already) passes as it is; anything else is a KindBroken saying `what` failed."""
    try:
        return function(*args, **kwargs)
    except WorkbenchError as exc:
        if own_errors:
            raise
        raise KindBroken(kind, what, exc) from exc
    except (Exception, SystemExit) as exc:  # noqa: BLE001 -- a plugin's bug, reported as its own
        raise KindBroken(kind, what, exc) from exc


def warn(message: str) -> None:
    """One line on stderr for a kind skipped while every kind is looked at (detection)."""
    print(f"warning: {message}", file=sys.stderr, flush=True)
