"""A persistent cache of model outputs in SQLite.

Each batch of results is committed in one transaction, so a run that is interrupted (Ctrl-C
or killed) keeps every committed batch and never leaves a half-written entry: the next run
computes only what is missing. WAL mode lets a reader (stats, the evaluator) look while a
stage writes.
"""

from __future__ import annotations

import json
import sqlite3
import time
from collections import Counter, defaultdict
from pathlib import Path
from typing import Iterable

from . import distributed
from .errors import InputError, display_path
from .progress import progress_bar

CHUNK = 256  # keys per committed write: an interrupted run keeps every finished chunk

SCHEMA = """
CREATE TABLE IF NOT EXISTS entries (
    namespace TEXT NOT NULL,
    model TEXT NOT NULL,
    revision TEXT NOT NULL,
    key TEXT NOT NULL,
    value TEXT NOT NULL,
    PRIMARY KEY (namespace, model, revision, key)
) WITHOUT ROWID;
"""


OPEN_WAIT_S = 60.0


def _open(path: Path, wait_s: float | None = None) -> sqlite3.Connection:
    """Connect, switch to WAL and create the table, retrying while another process does the same.

    SQLite answers "database is locked" at once, without its busy wait, when two processes
    switch a new file to WAL or create its schema together (every rank of a launcher opening
    one cache does). Those steps are idempotent, so each is retried with a short backoff.
    """
    deadline = time.monotonic() + (OPEN_WAIT_S if wait_s is None else wait_s)
    delay = 0.01
    while True:
        db = sqlite3.connect(str(path), timeout=60)
        try:
            if db.execute("PRAGMA journal_mode").fetchone()[0].lower() != "wal":
                db.execute("PRAGMA journal_mode=WAL")
            db.execute("PRAGMA synchronous=NORMAL")
            db.executescript(SCHEMA)
            return db
        except sqlite3.OperationalError as e:
            db.close()
            if "locked" not in str(e) and "busy" not in str(e) or time.monotonic() > deadline:
                raise
            time.sleep(delay)
            delay = min(delay * 2, 0.5)


SQLITE_MAGIC = b"SQLite format 3\x00"


def damaged(exc: sqlite3.Error) -> bool:
    """Whether SQLite says the file itself is bad, rather than that it could not be read or written
    here now (a full disk, a file-size limit, a read-only folder: 'disk I/O error', 'unable to open')."""
    code = getattr(exc, "sqlite_errorcode", None)
    if code is not None:
        return code & 0xFF in (sqlite3.SQLITE_CORRUPT, sqlite3.SQLITE_NOTADB)
    text = str(exc).lower()
    return "malformed" in text or "not a database" in text


def verify(path: Path) -> Path:
    """`path`, after checking that it can hold the score cache; an InputError naming it otherwise.

    Called before any model loads (`workbench evaluate --cache`) and by every `Cache`: a folder,
    a file that is not SQLite (or is damaged), another program's database (the cache would add
    its table to it) or a parent that is a file would otherwise end in a traceback from sqlite3
    after the first model loaded. Reads only; creates nothing."""
    path = Path(path)
    shown = display_path(path)
    if str(path) == ":memory:":
        return path
    if path.is_dir():
        raise InputError(f"score cache {shown} is a folder; name a file, e.g. {display_path(path / 'models.sqlite')}")
    if not path.exists():
        above = next((p for p in path.parents if p.exists()), None)
        if above is not None and not above.is_dir():
            raise InputError(f"score cache {shown}: {display_path(above)} is a file, not a folder")
        return path
    try:
        with open(path, "rb") as f:
            head = f.read(len(SQLITE_MAGIC))
    except OSError as exc:
        raise InputError(f"score cache {shown}: cannot read it ({exc.strerror or exc})") from None
    if not head:
        return path  # an empty file: SQLite makes it a new database
    if head != SQLITE_MAGIC:
        raise InputError(
            f"score cache {shown} is not a SQLite file; name another file (or move this one away): the "
            "cache is a SQLite database that workbench makes itself"
        )
    try:
        db = sqlite3.connect(f"{path.resolve().as_uri()}?mode=ro", uri=True, timeout=60)
        try:
            tables = {row[0] for row in db.execute("SELECT name FROM sqlite_master WHERE type='table'")}
        finally:
            db.close()
    except sqlite3.Error as exc:
        if not damaged(exc):  # the file may be sound: SQLite could not open it here, now
            raise InputError(
                f"score cache {shown} could not be opened ({exc}): a full disk, a file-size limit or a folder "
                "that cannot be written can cause this; the file is left as it is"
            ) from None
        raise InputError(
            f"score cache {shown} is a damaged SQLite file ({exc}); name another file, or delete this "
            "one (it only holds scores that can be computed again)"
        ) from None
    if tables and "entries" not in tables:
        raise InputError(
            f"score cache {shown} is a SQLite database of something else (its tables: "
            f"{', '.join(sorted(tables)[:5])}), not a workbench score cache; name another file"
        )
    return path


# Per cache file (resolved path), how many values this process read from it and wrote to it:
# outputs say how many of their scores came from the cache (evaluation/provenance).
USAGE: dict[str, Counter] = defaultdict(Counter)


def usage(path: Path) -> dict[str, int]:
    """{"read": n, "written": n} for the cache file at `path` so far in this process."""
    counts = USAGE[str(Path(path).resolve())]
    return {"read": counts["read"], "written": counts["written"]}


class Cache:
    """Key-value store per (namespace, model, revision); values are JSON."""

    def __init__(self, path: Path):
        verify(path)
        self.path = path
        self._usage = USAGE[str(Path(path).resolve())]
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            self.db = _open(path)
        except (OSError, sqlite3.Error) as exc:
            raise InputError(
                f"score cache {display_path(path)} cannot be opened: {getattr(exc, 'strerror', None) or exc}"
            ) from None

    def get_many(self, namespace: str, model: str, revision: str, keys: Iterable[str]) -> dict[str, object]:
        keys = list(dict.fromkeys(keys))
        if len(keys) > 2000:
            # One scan of the (namespace, model, revision) range beats thousands of lookups.
            wanted = set(keys)
            rows = self.db.execute(
                "SELECT key, value FROM entries WHERE namespace=? AND model=? AND revision=?",
                (namespace, model, revision),
            )
            found = {k: json.loads(v) for k, v in rows if k in wanted}
            self._usage["read"] += len(found)
            return found
        found: dict[str, object] = {}
        for i in range(0, len(keys), 500):
            chunk = keys[i : i + 500]
            marks = ",".join("?" * len(chunk))
            rows = self.db.execute(
                f"SELECT key, value FROM entries WHERE namespace=? AND model=? AND revision=? AND key IN ({marks})",
                (namespace, model, revision, *chunk),
            )
            for key, value in rows:
                found[key] = json.loads(value)
        self._usage["read"] += len(found)
        return found

    def put_many(self, namespace: str, model: str, revision: str, items: dict[str, object]) -> None:
        if not distributed.is_main():
            return  # under a launcher rank 0 alone writes (it commits what the other ranks gathered to it)
        self._usage["written"] += len(items)
        with self.db:  # one transaction: all of the batch or none of it
            self.db.executemany(
                "INSERT OR REPLACE INTO entries VALUES (?, ?, ?, ?, ?)",
                [(namespace, model, revision, k, json.dumps(v)) for k, v in items.items()],
            )

    def count(self, namespace: str, model: str | None = None) -> int:
        if model is None:
            return self.db.execute("SELECT COUNT(*) FROM entries WHERE namespace=?", (namespace,)).fetchone()[0]
        return self.db.execute(
            "SELECT COUNT(*) FROM entries WHERE namespace=? AND model=?", (namespace, model)
        ).fetchone()[0]

    def close(self) -> None:
        self.db.close()


def cached_or_computed(cache, namespace, ref, keys, compute, label, unit_total=None, chunk: int = CHUNK):
    """Values for keys from the cache; the missing ones computed by `compute(chunk, advance)`
    and committed chunk by chunk (with a progress bar), in the order of `keys`. Returns
    (values, number computed)."""
    distributed.barrier()  # under a launcher: every rank reads the cache as rank 0 last wrote it
    found = cache.get_many(namespace, ref.name, ref.revision, keys)
    missing = [k for k in keys if k not in found]
    distributed.barrier()  # ... and before rank 0 writes again
    if missing:
        with progress_bar(label, unit_total(missing) if unit_total else len(missing)) as advance:
            for i in range(0, len(missing), chunk):
                values = compute(missing[i : i + chunk], advance)
                cache.put_many(namespace, ref.name, ref.revision, values)  # rank 0 only: see put_many
                found.update(values)
    return found, len(missing)
