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
def progress_bar(description: str, total: int, unit: str = "") -> Iterator[Callable[[int], None]]:
    """Yields advance(n). Shows done/total, rate and ETA on stderr; with unit="bytes", as sizes
    (12.3/250.0 MB) and the rate in bytes a second."""
    if not _enabled() or total <= 0:
        yield lambda n: None
        return
    from rich.console import Console
    from rich.progress import (
        BarColumn,
        DownloadColumn,
        MofNCompleteColumn,
        Progress,
        TextColumn,
        TimeElapsedColumn,
        TimeRemainingColumn,
        TransferSpeedColumn,
    )

    columns = [
        TextColumn("{task.description}"),
        BarColumn(),
        *((DownloadColumn(), TransferSpeedColumn()) if unit == "bytes" else (MofNCompleteColumn(),)),
        TimeElapsedColumn(),
        TextColumn("eta"),
        TimeRemainingColumn(),
    ]
    with Progress(*columns, console=Console(stderr=True), transient=False) as bar:
        task = bar.add_task(description, total=total)
        yield lambda n: bar.advance(task, n)
