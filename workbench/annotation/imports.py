"""Labels from a file (non-interactive labelling, e.g. in CI or the demo)."""

from __future__ import annotations

import csv
import json
from pathlib import Path

from ..core.errors import InputError, display_path
from ..core.labels import LabelScheme
from .store import LabelStore


def read_label_file(path: Path, known_items: set[str], scheme: LabelScheme) -> list[dict]:
    """Rows {item, label, stance, note, flag, fix}; every problem names the line. Reads all first.
    `fix` (JSON lines only) is the corrected text a label proposes, {column: text}."""
    shown = display_path(path)
    if not path.is_file():
        raise InputError(f"label file not found: {shown}")
    text = path.read_text(encoding="utf-8")
    if path.suffix == ".csv":
        raw = [(i + 2, row) for i, row in enumerate(csv.DictReader(text.splitlines()))]
    else:
        raw = _json_lines(text, shown)
    rows, problems = [], []
    ids, labels = scheme.ids, scheme.labels
    keeps_stance = {c.label for c in scheme.choices if c.stance}
    verdicts: dict = {}  # (label, stance) -> the scheme's problem with it
    for number, row in raw:
        if not isinstance(row, dict):
            problems.append(f"{shown}:{number}: not a JSON object")
            continue
        item = row.get("item_id") or row.get("hypothesis_id")
        label = (row.get("label") or "").strip().lower()
        stance = (row.get("stance") or "").strip().lower() or None
        if label in ids:  # a choice id (e.g. valid-pro) carries its stance
            label, stance = scheme.decode(label)[0], scheme.decode(label)[1] or stance
        if (label, stance) not in verdicts:
            verdicts[(label, stance)] = scheme.problem(label, stance)
        problem = verdicts[(label, stance)]
        if not item:
            problems.append(f"{shown}:{number}: missing item_id")
        elif item not in known_items:
            problems.append(f"{shown}:{number}: item_id {item!r} is not in the annotation queue")
        elif label not in labels:
            problems.append(
                f"{shown}:{number}: label must be one of {list(labels)} (or {'/'.join(ids)}), not {label!r}"
            )
        elif problem:
            problems.append(f"{shown}:{number}: {problem}")
        elif (fix := row.get("fix")) is not None and not (
            isinstance(fix, dict) and fix and all(isinstance(v, str) and v.strip() for v in fix.values())
        ):
            problems.append(
                f'{shown}:{number}: fix must map each column to a non-empty corrected text, e.g. {{"sent_more": "..."}}'
            )
        else:
            flag = row.get("flag")
            rows.append(
                {
                    "item": item,
                    "label": label,
                    "stance": stance if label in keeps_stance else None,
                    "note": row.get("note") or None,
                    "fix": row.get("fix"),
                    "flag": None if flag in (None, "") else str(flag).lower() in ("1", "true", "yes"),
                }
            )
    if problems:
        raise InputError(f"{len(problems)} problem(s) in {shown}; nothing was written:\n" + "\n".join(problems[:30]))
    return rows


def _json_lines(text: str, shown: str) -> list[tuple[int, object]]:
    """(line number, value) of every non-empty line; parsed as one JSON array when it can be
    (100,000 lines in a fraction of the time), else line by line to name the bad line."""
    lines = text.splitlines()
    numbered = [(n, line) for n, line in enumerate(lines, start=1) if line.strip()]
    try:
        values = json.loads("[" + ",".join(line for _, line in numbered) + "]")
        if len(values) == len(numbered):
            return [(n, v) for (n, _), v in zip(numbered, values)]
    except json.JSONDecodeError:
        pass
    out = []
    for number, line in numbered:
        try:
            out.append((number, json.loads(line)))
        except json.JSONDecodeError as exc:
            raise InputError(f"{shown}:{number}: invalid JSON: {exc.msg}") from None
    return out


def apply_labels(store: LabelStore, rows: list[dict], source: str = "import", role: str | None = None) -> int:
    """Write what differs from the store's current state, as one batch: one fsync, and readers
    see the whole import or none of it (a killed import is simply run again). `role` marks the
    labels as adjudications."""
    written = 0
    with store.batch():
        for row in rows:
            state = store.states.get(row["item"])
            if not (
                state
                and state.label == row["label"]
                and state.stance == row["stance"]
                and state.adjudicated == (role is not None)
                and state.fix == row.get("fix")
            ):
                store.label(row["item"], row["label"], row["stance"], source=source, role=role, fix=row.get("fix"))
                written += 1
            if row["note"] and not (state and state.note == row["note"]):
                store.append(row["item"], "note", source, note=row["note"])
            if row["flag"] is not None and not (state and state.flag == row["flag"]):
                store.append(row["item"], "flag", source, flag=row["flag"])
    return written
