"""Progress bars for long work (rich), quiet when output is not a terminal or in tests."""

from __future__ import annotations

import os
import sys
from contextlib import contextmanager
from typing import Callable, Iterator


def _enabled() -> bool:
    from . import distributed

    return sys.stderr.isatty() and os.environ.get("WORKBENCH_PROGRESS", "1") != "0" and distributed.is_main()


@contextmanager
def progress_bar(description: str, total: int) -> Iterator[Callable[[int], None]]:
    """Yields advance(n). Shows done/total, rate and ETA on stderr."""
    if not _enabled() or total <= 0:
        yield lambda n: None
        return
    from rich.console import Console
    from rich.progress import (
        BarColumn,
        MofNCompleteColumn,
        Progress,
        TextColumn,
        TimeElapsedColumn,
        TimeRemainingColumn,
    )

    columns = [
        TextColumn("{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
        TextColumn("eta"),
        TimeRemainingColumn(),
    ]
    with Progress(*columns, console=Console(stderr=True), transient=False) as bar:
        task = bar.add_task(description, total=total)
        yield lambda n: bar.advance(task, n)
