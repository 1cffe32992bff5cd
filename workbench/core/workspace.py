"""The workspace: each stage's output table (Parquet) with a manifest beside it.

Layout: `<workspace>/<stage>/data.parquet` and `<workspace>/<stage>/manifest.json`. The
table is written to a temporary file and renamed into place, then the manifest (which holds
the table's sha256) is written the same way, so a crash leaves either the old complete
output or the new one, never a torn table that looks valid.
"""

from __future__ import annotations

import json
import os
import platform
import time
from pathlib import Path
from typing import Any

from .. import __version__
from .errors import StageError
from .ids import file_sha256

# The one atomic writer every output goes through (a temporary file renamed into place, removed
# on failure; a device or FIFO written through, never renamed over): see core/outputs.py.
from .outputs import atomic_write_bytes, atomic_write_text  # noqa: F401

DATA_FILE = "data.parquet"
MANIFEST_FILE = "manifest.json"


class Workspace:
    def __init__(self, root: Path):
        self.root = Path(root)

    def stage_dir(self, stage: str) -> Path:
        return self.root / stage

    def manifest(self, stage: str) -> dict | None:
        path = self.stage_dir(stage) / MANIFEST_FILE
        if not path.is_file():
            return None
        try:
            return json.loads(path.read_text(encoding="utf-8"))
        except (OSError, json.JSONDecodeError):
            return None

    def write(
        self,
        stage: str,
        rows: list[dict] | Any,
        *,
        inputs: dict[str, str],
        config_hash: str,
        counts: dict[str, Any],
        started: float,
        extra: dict[str, Any] | None = None,
    ) -> Path:
        import pyarrow as pa
        import pyarrow.parquet as pq

        table = rows if isinstance(rows, pa.Table) else pa.Table.from_pylist(rows)
        folder = self.stage_dir(stage)
        folder.mkdir(parents=True, exist_ok=True)
        data_path = folder / DATA_FILE
        tmp = folder / f".{DATA_FILE}.{os.getpid()}.tmp"
        pq.write_table(table, tmp, write_statistics=False)  # tables are read whole: statistics only cost time
        with open(tmp, "rb") as f:
            os.fsync(f.fileno())
        os.replace(tmp, data_path)
        manifest = {
            "stage": stage,
            "tool_version": __version__,
            "python": platform.python_version(),
            "created": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
            "inputs": inputs,
            "config_hash": config_hash,
            "rows": table.num_rows,
            "counts": counts,
            "seconds": round(time.perf_counter() - started, 4),
            "data_sha256": file_sha256(data_path),
            **(extra or {}),
        }
        atomic_write_text(folder / MANIFEST_FILE, json.dumps(manifest, indent=2, sort_keys=True) + "\n")
        return data_path

    def read(self, stage: str, columns: tuple[str, ...] | list[str] | None = None, without: tuple[str, ...] = ()):
        """The stage's table (only `columns`, where given; not those `without` names); a clear error
        when the stage has not run or its output is damaged."""
        import pyarrow.parquet as pq

        manifest = self.manifest(stage)
        data_path = self.stage_dir(stage) / DATA_FILE
        if manifest is None or not data_path.is_file():
            raise StageError(f"stage {stage!r} has no output in {self.root}: run `workbench {stage}` first")
        if file_sha256(data_path) != manifest.get("data_sha256"):
            raise StageError(
                f"stage {stage!r} output does not match its manifest (damaged?): run `workbench {stage}` again"
            )
        # ParquetFile, not read_table: read_table goes through pyarrow.dataset, which imports pandas
        # (a quarter of a second of every command that reads a stage, e.g. the TUI's start).
        data = pq.ParquetFile(data_path)
        if without:
            columns = [c for c in (data.schema_arrow.names if columns is None else columns) if c not in without]
        return data.read(columns=None if columns is None else list(columns))

    def state(self, stage: str, inputs: dict[str, str], config_hash: str) -> str:
        """fresh (inputs and config unchanged), stale, or missing."""
        manifest = self.manifest(stage)
        if manifest is None or not (self.stage_dir(stage) / DATA_FILE).is_file():
            return "missing"
        if manifest.get("inputs") != inputs or manifest.get("config_hash") != config_hash:
            return "stale"
        return "fresh"
