"""Reading Parquet strictly (text and JSON: `text.py`): a cut or corrupt table is an InputError
naming the file and what is wrong, so `workbench evaluate` and a release's evaluate.py end
with one line and exit code 2, never pyarrow's traceback.

Pure code (pyarrow inside the function): a release's evaluate.py carries it verbatim.
"""

from __future__ import annotations

from pathlib import Path

from .errors import InputError, display_path


def read_parquet(path: Path, what: str = "data file"):
    """A Parquet table (pyarrow.Table); a cut or corrupt file is an InputError naming it."""
    try:
        import pyarrow as pa
        import pyarrow.parquet as pq
    except ImportError:
        raise InputError(f"reading {display_path(path)} needs pyarrow (pip install pyarrow)") from None
    try:
        return pq.read_table(path)
    except (pa.ArrowException, OSError, ValueError) as exc:
        reason = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        raise InputError(
            f"{display_path(path)}: the {what} is not a readable Parquet file ({reason}); download or build it again"
        ) from None
