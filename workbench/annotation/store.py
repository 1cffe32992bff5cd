"""The label store: one append-only JSON-lines file of events per annotator.

Why events: the latest event of an annotator for an item wins, undo is itself an event, and
files only ever grow, so teams can commit them and git merges never conflict (each annotator
writes their own file). Every write is flushed and fsynced before `append` returns, so what
the UI acknowledged survives a crash; a write that fails is cut off again and raised as
`LabelNotSaved`, so nothing half-written stays in front of the next event.

Before every write, under the file's lock, the end of the file is checked: a last line torn
by a crash (or by a failed write that could not be cut off) is moved aside into
`<file>.torn`, so the next event always starts on a line of its own. When loading, a torn
last line is reported and ignored; everything before it loads.

Bulk writers (imports, Label Studio pulls) use `batch()`: their events go to disk in one
write with one fsync. Every event of a batch carries `batch` (its id) and the last one also
`batch_size`; a reader takes a batch's events only once it has read that last event with the
right count, so a batch cut short by a crash is seen by nobody (it is reported, and moved
aside by the next write). Older versions read such files as plain events: the two fields are
extra keys they ignore.

Event fields: id, item (hypothesis_id), annotator, type (label | undo | note | flag),
timestamp, source (tui | labelstudio | import) and, per type: label + stance, undoes, note,
flag; optionally batch and batch_size. A label given in adjudication (`annotate --adjudicate`)
carries `role: adjudicator`; readers without that key see a plain label. A label may carry
`fix` ({column: corrected text}: the text its annotator proposes with a `fix` decision of an
audit, docs/renewing.md); it is part of the label, so undo, history and attribution are the
label's, and readers without that key see a plain label.

Annotator names are one person whatever their case (`Lena` is `lena`): a store opens the file
whose name matches regardless of case. Files that differ only by case (written before that
rule) are read together, their events merged by time.

One live labelling session per annotator: `lock_session` holds an exclusive `flock` on
`.<annotator>.lock` beside the label file for the session's life, and writes there who holds it
(process id and start time, host). A session that closes removes the file. The kernel drops
the flock when the process ends in any way (kill -9 included): the file a crash leaves is taken
over by the next session without a word. A flock still held once its session's process is
gone (a child forked by it outlived it) is recognised by the process id and start time it
records and taken over too (on the same host; another host's session cannot be judged).
"""

from __future__ import annotations

import errno
import fcntl
import heapq
import json
import os
import re
import socket
import time
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import Callable

from ..core.errors import InputError, WorkbenchError, display_path
from ..core.labels import LabelScheme

EVENT_TYPES = ("label", "undo", "note", "flag")
NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.@-]{0,63}$")


def check_annotator(name: str) -> str:
    if not NAME.match(name or ""):
        raise InputError(f"annotator name {name!r} must be 1-64 letters, digits, '.', '_', '-' or '@'")
    return name


def annotator_key(name: str) -> str:
    """What identifies an annotator: the name without regard to case."""
    return name.lower()


def annotator_files(folder: Path, name: str) -> list[Path]:
    """The label files of one annotator (several only when old files differ by case), sorted."""
    key = annotator_key(name)
    if not Path(folder).is_dir():
        return []
    return sorted(p for p in Path(folder).glob("*.jsonl") if annotator_key(p.stem) == key and NAME.match(p.stem))


class LabelNotSaved(WorkbenchError):
    """A write failed: nothing of it counts (it was cut off the file again, or will be before
    the next write). `cause` says what happened in a few words, for the UI."""

    def __init__(self, cause: str, what: str, path: Path, code: int | None = None):
        self.cause, self.what, self.path, self.errno = cause, what, path, code
        super().__init__(f"{cause}: {what} NOT saved to {display_path(path)}. {self.remedy}, then try again.")

    @property
    def remedy(self) -> str:
        if self.errno in (errno.ENOSPC, errno.EDQUOT):
            return "Free space"
        if self.errno == errno.EFBIG:
            return "Raise the file size limit (ulimit -f)"
        return "Fix the problem"


def _not_saved(exc: OSError, what: str, path: Path) -> LabelNotSaved:
    causes = {
        errno.ENOSPC: "Disk full",
        errno.EDQUOT: "Disk quota exceeded",
        errno.EFBIG: "File size limit reached",
        errno.EROFS: "The disk is read-only",
        errno.EACCES: "No permission to write",
        errno.EIO: "The disk reported an input/output error",
    }
    cause = causes.get(exc.errno) or exc.strerror or type(exc).__name__
    return LabelNotSaved(cause, what, path, exc.errno)


@dataclass
class ItemState:
    """An annotator's current view of one item."""

    label: str | None = None
    stance: str | None = None
    note: str | None = None
    flag: bool = False
    label_event: str | None = None
    adjudicated: bool = False  # the label in force was given in adjudication
    fix: dict | None = None  # the corrected text the label in force proposes, if any
    # label events still in force, oldest first, by id: undo removes one in O(1)
    history: dict[str, dict] = field(default_factory=dict)


@dataclass
class LoadReport:
    events: int = 0
    torn: str | None = None  # description of a torn last line, if any
    error: str | None = None  # the file could not be read at all
    bad_lines: list[str] = field(default_factory=list)
    interrupted: list[str] = field(default_factory=list)  # batches cut short (none of their events taken)
    size: int = 0  # bytes read
    cut_at: int | None = None  # where a torn line or an interrupted batch at the end begins

    def messages(self) -> list[str]:
        return self.bad_lines + self.interrupted + ([self.torn] if self.torn else [])


def _validate(event: dict, scheme: LabelScheme | None, known: dict | None = None) -> str | None:
    """Why an event cannot be taken, or None. `known` caches the scheme's verdict per
    (label, stance): loading 100,000 events asks the same few questions again and again."""
    if not isinstance(event, dict):
        return "not a JSON object"
    get = event.get
    a, b, c, kind = get("id"), get("item"), get("annotator"), get("type")
    if not (type(a) is str and a and type(b) is str and b and type(c) is str and c and type(kind) is str and kind):
        return "missing " + next(
            k for k in ("id", "item", "annotator", "type") if type(get(k)) is not str or not get(k)
        )
    if kind == "label":
        label, stance = event.get("label"), event.get("stance")
        if scheme is None:  # no kind's scheme given: any label word, checked by whoever reads it
            problem = None if type(label) is str and label else "missing label"
        elif known is not None and type(label) is str and (stance is None or type(stance) is str):
            problem = known.get((label, stance), False)
            if problem is False:
                problem = known[(label, stance)] = scheme.problem(label, stance)
        else:
            problem = scheme.problem(label, stance)
        if problem:
            return problem
        fix = event.get("fix")
        if fix is not None and not (
            isinstance(fix, dict)
            and fix
            and all(type(k) is str and type(v) is str and v.strip() for k, v in fix.items())
        ):
            return "fix must map each column to a non-empty corrected text"
    elif kind not in EVENT_TYPES:
        return f"unknown type {kind!r}"
    elif kind == "undo" and not isinstance(event.get("undoes"), str):
        return "undo without the event it undoes"
    if event.get("role", "adjudicator") != "adjudicator":
        return "role must be adjudicator"
    if "batch" in event:
        if not (isinstance(event["batch"], str) and event["batch"]):
            return "batch must be a non-empty string"
        size = event.get("batch_size")
        if size is not None and not (type(size) is int and size > 0):
            return "batch_size must be a positive whole number"
    elif "batch_size" in event:
        return "batch_size without batch"
    return None


def _read_locked(path: Path) -> bytes:
    """The file's bytes, read under a shared lock so no writer is half-way through a line."""
    with open(path, "rb") as f:
        try:
            fcntl.flock(f, fcntl.LOCK_SH)
        except OSError:
            pass  # a file system without flock: read as it is (torn lines are still detected)
        return f.read()


_BLANK = object()  # an empty line (skipped; `null` on a line is a bad line)


def _parse(body: bytes) -> list:
    """One JSON value (or the exception) per line of `body` (complete lines only). Parsed as
    one JSON array when every line is one value: several times faster than line by line."""
    lines = body.count(b"\n")
    if not lines:
        return []
    try:
        values = json.loads(b"[" + body[:-1].replace(b"\n", b",") + b"]")
        if len(values) == lines:
            return values
    except ValueError:  # JSONDecodeError, UnicodeDecodeError: find the line(s) one by one
        pass
    out = []
    for raw in body.split(b"\n")[:-1]:
        if not raw.strip():
            out.append(_BLANK)
            continue
        try:
            out.append(json.loads(raw))
        except ValueError as exc:
            out.append(exc)
    return out


def read_events(path: Path, scheme: LabelScheme | None = None) -> tuple[list[dict], LoadReport]:
    """All good events of one file, in order, and what was wrong with the rest."""
    report = LoadReport()
    try:
        data = _read_locked(path)
    except OSError as exc:
        raise InputError(f"cannot read label file {display_path(path)}: {exc.strerror}") from None
    shown = display_path(path)
    cut = data.rfind(b"\n") + 1
    body, tail = data[:cut], data[cut:]
    events: list[dict] = []
    pending: dict[str, list[dict]] = {}  # batch id -> its events read so far
    first_line: dict[str, int] = {}  # batch id -> the line of its first event
    run_batch, run_start = None, 0  # the batch the last lines belong to, and the line that run began on
    known: dict = {}
    values = _parse(body)
    for number, event in enumerate(values, start=1):
        if event is _BLANK:
            continue
        if isinstance(event, ValueError):
            problem = f"unreadable ({type(event).__name__})"
        else:
            problem = _validate(event, scheme, known)
        if problem:
            report.bad_lines.append(f"{shown}:{number}: {problem}; line ignored")
            run_batch = None
            continue
        batch = event.get("batch")
        if batch is None:
            events.append(event)
            run_batch = None
            continue
        if batch != run_batch:
            run_batch, run_start = batch, number
        got = pending.setdefault(batch, [])
        first_line.setdefault(batch, number)
        got.append(event)
        size = event.get("batch_size")
        if size is not None:
            del pending[batch]
            line = first_line.pop(batch)
            if size == len(got):
                events.extend(got)
            else:
                report.interrupted.append(
                    f"{shown}:{line}-{number}: a batch of {size} events has {len(got)}; none of them taken"
                )
            run_batch = None
    for batch, got in pending.items():
        report.interrupted.append(
            f"{shown}:{first_line[batch]}: {len(got)} event(s) of a bulk write that was "
            "interrupted (an import or pull killed mid-way?); none of them taken: run it again"
        )
    if run_batch is not None and run_batch in pending:  # the file ends with it: the next write moves it aside
        report.cut_at = sum(len(line) + 1 for line in body.split(b"\n")[: run_start - 1])
    if tail.strip():
        report.torn = f"{shown}:{len(values) + 1}: last line is incomplete (a crash while writing?); ignored"
        if report.cut_at is None:
            report.cut_at = cut
    report.events = len(events)
    report.size = len(data)
    return events, report


def _merged(streams: list[list[dict]]) -> list[dict]:
    """Events of several files of one annotator in time order (each file's own order kept),
    an undo never before the event it undoes (timestamps are to the millisecond: ties happen)."""
    ids = {e["id"] for events in streams for e in events}
    out: list[dict] = []
    seen: set[str] = set()
    waiting: dict[str, list[dict]] = {}
    for e in heapq.merge(*streams, key=lambda e: str(e.get("timestamp") or "")):
        target = e.get("undoes") if e["type"] == "undo" else None
        if target in ids and target not in seen:
            waiting.setdefault(target, []).append(e)
            continue
        out.append(e)
        seen.add(e["id"])
        out += waiting.pop(e["id"], [])
    return out


class _Folder:
    """Current states per item, updated one event at a time: O(1) per event."""

    def __init__(self) -> None:
        self.states: dict[str, ItemState] = {}

    def apply(self, e: dict) -> ItemState:
        s = self.states.get(e["item"])
        if s is None:
            s = self.states[e["item"]] = ItemState()
        kind = e["type"]
        if kind == "label":
            s.history.pop(e["id"], None)  # an id seen twice counts where it was seen last
            s.history[e["id"]] = e
            s.label, s.stance, s.label_event, s.fix = e["label"], e.get("stance"), e["id"], e.get("fix")
            s.adjudicated = e.get("role") == "adjudicator"
        elif kind == "undo":
            if s.history.pop(e["undoes"], None) is not None and s.label_event == e["undoes"]:
                last = next(reversed(s.history.values()), None)
                s.label = last["label"] if last else None
                s.stance = last.get("stance") if last else None
                s.label_event = last["id"] if last else None
                s.fix = last.get("fix") if last else None
                s.adjudicated = bool(last) and last.get("role") == "adjudicator"
        elif kind == "note":
            s.note = e.get("note") or None
        elif kind == "flag":
            s.flag = bool(e.get("flag"))
        return s


def fold(events: list[dict]) -> dict[str, ItemState]:
    """Replay events into the current state per item (latest wins; undo removes its target)."""
    folder = _Folder()
    for e in events:
        folder.apply(e)
    return folder.states


_clock: list = [None, ""]  # the last millisecond asked for, and its text


def _now() -> str:
    """UTC now to the millisecond, as events record it (formatted once per millisecond: a
    bulk import asks for it 100,000 times in a few)."""
    ms = time.time_ns() // 1_000_000
    if ms != _clock[0]:
        stamp = datetime.fromtimestamp(ms / 1000, timezone.utc).isoformat(timespec="milliseconds")
        _clock[:] = [ms, stamp.replace("+00:00", "Z")]
    return _clock[1]


_encode = json.JSONEncoder(ensure_ascii=False, sort_keys=True).encode  # json.dumps makes one per call


def _line(event: dict) -> bytes:
    return (_encode(event) + "\n").encode("utf-8")


WHAT = {"label": "this label was", "undo": "this undo was", "note": "this note was", "flag": "this flag was"}


class LabelStore:
    """One annotator's file: load, append events durably, keep current states up to date."""

    def __init__(self, folder: Path, annotator: str, strict: bool = True, scheme: LabelScheme | None = None):
        """strict=False turns an unreadable file into `report.error` (the UI shows it and goes
        on; writing will then fail with a clear message too) instead of raising. `scheme`: the
        kind's label scheme, which labels are checked against (None: any label word)."""
        check_annotator(annotator)
        self.scheme = scheme
        self.folder = Path(folder)
        files = annotator_files(self.folder, annotator)
        self.path = files[0] if files else self.folder / f"{annotator}.jsonl"
        self.annotator = self.path.stem  # the spelling already on disk
        self.other_files = files[1:]  # the same annotator spelled otherwise (read, never written)
        self._fd: int | None = None
        self._lock_fd: int | None = None
        self._lock_path: Path | None = None
        self.took_over: str | None = None  # what lock_session said when it took over a stale lock
        self._pending: list[dict] | None = None
        self._known: dict = {}  # the scheme's verdict per (label, stance)
        self._load(strict)

    def _load(self, strict: bool = True) -> None:
        self.events: list[dict] = []
        self.report = LoadReport()
        self._folder = _Folder()
        self.states = self._folder.states
        self._ids: set[str] = set()
        self._seq: dict[str, int] = {}  # label event id -> its place among the events
        self._heap: list[tuple[int, str, str]] = []  # (-place, id, item) of labels, maybe no longer in force
        self._end, self._cut_at = 0, None  # the file's size as last seen, and what to cut before writing
        streams = []
        for path in [self.path, *self.other_files]:
            if not path.exists():
                continue
            try:
                events, report = read_events(path, self.scheme)
            except InputError as exc:
                if strict:
                    raise
                self.report.error = str(exc)
                continue
            streams.append(events)
            if path == self.path:
                self.report, self._end, self._cut_at = report, report.size, report.cut_at
            else:
                self.report.bad_lines += report.messages()
        if self.other_files:
            names = ", ".join(display_path(p) for p in [self.path, *self.other_files])
            self.report.bad_lines.append(
                f"{names} hold the labels of one annotator (the names differ only in case): "
                f"read together, latest event wins; new labels go to {self.path.name}"
            )
        self._replay(streams[0] if len(streams) == 1 else _merged(streams))

    def _replay(self, events: list[dict]) -> None:
        """`_apply` for a whole file at once (the heap built in one go): start-up time."""
        apply, ids, seq, heap = self._folder.apply, self._ids, self._seq, self._heap
        place = len(self.events)
        self.events.extend(events)
        for e in events:
            place += 1
            ids.add(e["id"])
            state = apply(e)
            kind = e["type"]
            if kind == "label":
                seq[e["id"]] = place
                heap.append((-place, e["id"], e["item"]))
            elif kind == "undo" and state.label_event:
                heap.append((-seq.get(state.label_event, 0), state.label_event, e["item"]))
        heapq.heapify(heap)

    def warnings(self) -> list[str]:
        r = self.report
        return ([r.error] if r.error else []) + r.messages() + ([self.took_over] if self.took_over else [])

    # -- writing ---------------------------------------------------------------------------
    def _open(self, what: str) -> int:
        if self._fd is None:
            try:
                self.folder.mkdir(parents=True, exist_ok=True)
                created = not self.path.exists()
                fd = os.open(self.path, os.O_RDWR | os.O_CREAT | os.O_APPEND, 0o644)
                if created:  # the new name must survive a crash too
                    folder_fd = os.open(self.folder, os.O_RDONLY)
                    try:
                        os.fsync(folder_fd)
                    finally:
                        os.close(folder_fd)
            except OSError as exc:
                raise _not_saved(exc, what, self.path) from None
            self._fd = fd
        return self._fd

    def _repair(self, fd: int, what: str) -> int:
        """Under the lock: move a torn last line (or a batch cut short) aside; returns the
        offset where the next write begins."""
        size = os.fstat(fd).st_size
        cut = self._cut_at if size == self._end else None
        if cut is None and size and os.pread(fd, 1, size - 1) != b"\n":
            cut = size
            while cut > 0:  # back to the last newline
                chunk = os.pread(fd, min(cut, 65536), max(0, cut - 65536))
                found = chunk.rfind(b"\n")
                if found >= 0:
                    cut = cut - len(chunk) + found + 1
                    break
                cut -= len(chunk)
        if cut is None or cut >= size:
            return size
        try:
            with open(self.path.with_name(self.path.name + ".torn"), "ab") as aside:
                aside.write(os.pread(fd, size - cut, cut).rstrip(b"\n") + b"\n")
                aside.flush()
                os.fsync(aside.fileno())
            os.ftruncate(fd, cut)
            os.fsync(fd)
        except OSError as exc:
            raise _not_saved(exc, what, self.path) from None
        self._cut_at, self._end = None, cut
        return cut

    def _write(self, data: bytes, what: str) -> None:
        """Append `data` durably, or leave the file as it was and raise LabelNotSaved."""
        fd = self._open(what)
        fcntl.flock(fd, fcntl.LOCK_EX)
        try:
            start = self._repair(fd, what)
            try:
                written = 0
                while written < len(data):
                    written += os.write(fd, data[written:])
                os.fsync(fd)
            except OSError as exc:
                try:  # cut the partial write off now; if that fails too, the next write's repair does
                    os.ftruncate(fd, start)
                    os.fsync(fd)
                    self._end = start
                except OSError:
                    self._end = -1
                self._fd = None  # the next write opens the file afresh (it may have been replaced meanwhile)
                raise _not_saved(exc, what, self.path) from None
            self._end = start + len(data)
        finally:
            fcntl.flock(fd, fcntl.LOCK_UN)
            if self._fd is None:
                os.close(fd)

    def append(
        self,
        item: str,
        type_: str,
        source: str = "tui",
        *,
        event_id: str | None = None,
        timestamp: str | None = None,
        **fields,
    ) -> dict:
        """Write one event durably (flush + fsync) and apply it; returns the event. Inside
        `batch()`, the event is applied now and written with the batch.

        Imports pass a stable event_id (and the source's timestamp) so that importing the
        same thing twice can be recognised and skipped."""
        event = {
            "id": event_id or os.urandom(16).hex(),
            "item": item,
            "annotator": self.annotator,
            "type": type_,
            "timestamp": timestamp or _now(),
            "source": source,
        }
        for key, value in fields.items():
            if value is not None:
                event[key] = value
        problem = _validate(event, self.scheme, self._known)
        if problem:
            raise InputError(f"refusing to write an invalid event: {problem}")
        if self._pending is not None:
            self._pending.append(event)
        else:
            self._write(_line(event), WHAT[type_])
        self._apply(event)
        return event

    @contextmanager
    def batch(self):
        """Group commit for bulk writers: the events appended inside are written at the end in
        one write with one fsync, and every reader sees all of them or none. If anything fails,
        nothing of the batch is on disk and the store is reloaded from the file."""
        if self._pending is not None:  # already in a batch: part of it
            yield self
            return
        self._pending = []
        try:
            yield self
            events, self._pending = self._pending, None
            if len(events) > 1:
                batch = os.urandom(16).hex()
                for e in events:
                    e["batch"] = batch
                events[-1]["batch_size"] = len(events)
            if events:
                self._write(
                    b"".join(_line(e) for e in events),
                    WHAT[events[0]["type"]] if len(events) == 1 else f"{len(events)} events were",
                )
        except BaseException:
            self._pending = None
            self._load(strict=False)
            raise
        finally:
            self._pending = None

    def _apply(self, event: dict) -> None:
        self.events.append(event)
        self._ids.add(event["id"])
        state = self._folder.apply(event)
        if event["type"] == "label":
            place = len(self.events)
            self._seq[event["id"]] = place
            heapq.heappush(self._heap, (-place, event["id"], event["item"]))
        elif event["type"] == "undo" and state.label_event:  # an earlier label is back in force
            heapq.heappush(self._heap, (-self._seq.get(state.label_event, 0), state.label_event, event["item"]))

    # -- reading ---------------------------------------------------------------------------
    def label(
        self,
        item: str,
        label: str,
        stance: str | None = None,
        source: str = "tui",
        role: str | None = None,
        fix: dict | None = None,
    ) -> dict:
        """A label event; `role="adjudicator"` marks a label given in adjudication; `fix` is the
        corrected text the label proposes ({column: text})."""
        if (
            stance is not None
            and self.scheme is not None
            and not any(c.label == label and c.stance for c in self.scheme.choices)
        ):
            stance = None
        return self.append(item, "label", source, label=label, stance=stance, role=role, fix=fix)

    def undo(self, item: str, source: str = "tui") -> dict | None:
        """Undo the item's latest label still in force (nothing to undo -> None)."""
        state = self.states.get(item)
        if not state or not state.label_event:
            return None
        return self.append(item, "undo", source, undoes=state.label_event)

    def has_event(self, event_id: str) -> bool:
        return event_id in self._ids

    def place(self, event_id: str) -> int:
        """Where a label event comes among this annotator's events (later is larger; -1: unknown)."""
        return self._seq.get(event_id, -1)

    def latest_label(self, accept: Callable[[dict], bool] = lambda e: True) -> dict | None:
        """The most recent label event still in force that `accept` takes, in O(log n) per
        label looked at: labels no longer in force leave the heap for good."""
        heap, passed, seen = self._heap, [], set()
        found = None
        while heap:
            entry = heap[0]
            _, event_id, item = entry
            state = self.states.get(item)
            heapq.heappop(heap)
            if state is None or state.label_event != event_id or event_id in seen:
                continue
            seen.add(event_id)
            passed.append(entry)
            event = state.history[event_id]
            if accept(event):
                found = event
                break
        for entry in passed:
            heapq.heappush(heap, entry)
        return found

    def labelled(self) -> set[str]:
        return {item for item, s in self.states.items() if s.label}

    def lock_session(self) -> None:
        """Claim this annotator's labels for one live session, or refuse with who holds them.

        Two windows of the same annotator would serve the same items and silently replace each
        other's labels. The lock is a flock, which the kernel drops when its process ends; the
        file records the process (id, start time, host), so that a flock outliving its session
        (held by a child the session forked) is recognised as stale and taken over."""
        if self._lock_fd is not None:
            return
        path = self.folder / f".{annotator_key(self.annotator)}.lock"
        try:
            self.folder.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise InputError(f"cannot create the session lock {display_path(path)}: {exc.strerror}") from None
        for _ in range(5):  # the file was replaced under us (a session closed, a stale lock taken over): again
            try:
                fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
            except OSError as exc:
                raise InputError(f"cannot create the session lock {display_path(path)}: {exc.strerror}") from None
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                holder = _lock_holder(fd)
                examined = os.fstat(fd)
                os.close(fd)
                if _session_gone(holder):
                    _remove_stale_lock(path, examined)
                    self.took_over = (
                        f"{self.annotator}'s session lock was still held for process {holder.get('pid')} on "
                        f"{holder.get('host')} (since {holder.get('since')}), which has ended; a process it "
                        "started kept the lock, so this session took it over"
                    )
                    continue
                self._refuse(holder)
            except OSError:  # a file system without flock: the record alone says whether a session holds it
                holder = _lock_holder(fd)
                if holder.get("pid") and not _session_gone(holder):
                    os.close(fd)
                    self._refuse(
                        holder,
                        remedy=f" (this file system has no file locks: if that session is over, "
                        f"remove {display_path(path)})",
                    )
            if not _same_file(path, fd):
                os.close(fd)
                continue
            os.ftruncate(fd, 0)
            os.pwrite(fd, json.dumps(_this_process()).encode(), 0)
            self._lock_fd = fd
            self._lock_path = path
            return
        raise InputError(
            f"cannot take the session lock {display_path(path)}: other sessions keep replacing it; try again"
        )

    def _refuse(self, holder: dict, remedy: str = "") -> None:
        who = (
            f" (process {holder.get('pid')} on {holder.get('host')}, since {holder.get('since')})"
            if holder.get("pid")
            else ""
        )
        raise InputError(
            f"{self.annotator} already has a labelling session open on {display_path(self.folder)}"
            f"{who}. Finish that one first (q): two sessions of one annotator would serve the "
            f"same items and replace each other's labels{remedy}."
        ) from None

    def close(self) -> None:
        if self._fd is not None:
            os.close(self._fd)
            self._fd = None
        if self._lock_fd is not None:
            # Still holding it: the file is ours to remove (a session that fails to is taken over).
            if _same_file(self._lock_path, self._lock_fd):
                try:
                    os.unlink(self._lock_path)
                except OSError:
                    pass
            os.close(self._lock_fd)  # releases the session lock
            self._lock_fd = None


def _process_start(pid: int) -> int | None:
    """When process `pid` started (clock ticks since boot, /proc), or None where that cannot be read."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as f:
            return int(f.read().rsplit(b")", 1)[1].split()[19])  # field 22: starttime
    except (OSError, ValueError, IndexError):
        return None


def _pid_namespace() -> str | None:
    try:
        return os.readlink("/proc/self/ns/pid")
    except OSError:
        return None


def _this_process() -> dict:
    """What a session lock records of its holder."""
    return {
        "pid": os.getpid(),
        "started": _process_start(os.getpid()),
        "pidns": _pid_namespace(),
        "host": socket.gethostname(),
        "since": datetime.now(timezone.utc).isoformat(timespec="seconds").replace("+00:00", "Z"),
    }


def _lock_holder(fd: int) -> dict:
    try:
        holder = json.loads(os.pread(fd, 4096, 0) or b"{}")
    except (OSError, ValueError):
        return {}
    return holder if isinstance(holder, dict) else {}


def _session_gone(holder: dict) -> bool:
    """True when the session a lock file names has certainly ended: its process, on this host and
    in this process namespace, no longer runs (or runs as another program: a reused id with another
    start time). Anything that cannot be judged (another host, no record yet) is a live session."""
    pid = holder.get("pid")
    if type(pid) is not int or pid <= 0 or holder.get("host") != socket.gethostname():
        return False
    if holder.get("pidns") != _pid_namespace():
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    except PermissionError:
        pass  # a process of another user runs under that id
    started = _process_start(pid)
    return started is not None and holder.get("started") is not None and started != holder.get("started")


def _same_file(path: Path, fd: int) -> bool:
    """Whether `path` still names the file open at `fd` (not removed or replaced since)."""
    try:
        st, own = os.stat(path), os.fstat(fd)
    except OSError:
        return False
    return (st.st_dev, st.st_ino) == (own.st_dev, own.st_ino)


def _remove_stale_lock(path: Path, examined: os.stat_result) -> None:
    """Remove the lock file whose holder is gone, if it is still the one examined: two sessions
    taking it over at once do this in turn (a flock on the folder), so neither removes the new
    file the other made."""
    guard = None
    try:
        guard = os.open(path.parent, os.O_RDONLY)
        fcntl.flock(guard, fcntl.LOCK_EX)
    except OSError:
        pass  # a file system without flock on folders: the check below still narrows the race
    try:
        st = os.stat(path)
        if (st.st_dev, st.st_ino) == (examined.st_dev, examined.st_ino):
            os.unlink(path)
    except OSError:
        pass
    finally:
        if guard is not None:
            os.close(guard)


def load_all(folder: Path, scheme: LabelScheme | None = None) -> tuple[dict[str, dict[str, ItemState]], list[str]]:
    """Every annotator's current states: {annotator: {item: state}}, and load warnings.
    Names that differ only in case are one annotator (events merged by time)."""
    out: dict[str, dict[str, ItemState]] = {}
    warnings: list[str] = []
    if not Path(folder).is_dir():
        return out, warnings
    streams: dict[str, list[list[dict]]] = {}
    names: dict[str, str] = {}
    files: dict[str, list[str]] = {}
    for path in sorted(Path(folder).glob("*.jsonl")):
        events, report = read_events(path, scheme)
        warnings += report.messages()
        by_annotator: dict[str, list[dict]] = {}
        for e in events:
            by_annotator.setdefault(annotator_key(e["annotator"]), []).append(e)
        for key, evs in by_annotator.items():
            names.setdefault(key, evs[0]["annotator"])
            streams.setdefault(key, []).append(evs)
            files.setdefault(key, []).append(display_path(path))
    for key, lists in streams.items():
        spellings = sorted({e["annotator"] for evs in lists for e in evs[:1]})
        if len(spellings) > 1:
            warnings.append(
                f"{', '.join(files[key])} hold the labels of one annotator ({' = '.join(spellings)}: "
                "names differ only in case): read together, latest event wins"
            )
        out[names[key]] = fold(lists[0] if len(lists) == 1 else _merged(lists))
    return out, warnings
