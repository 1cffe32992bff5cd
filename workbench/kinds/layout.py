"""What a file that no kind reads looks like: a delimiter or layout mistake named as such, and
the kind whose columns it nearly has (issue #35's input messages).

`hint(path)` reads the first lines only; it returns one sentence, or "" when it has nothing
better to say than the caller's own message.
"""

from __future__ import annotations

import json
from pathlib import Path

# kind -> (its file's layout in words, the columns a file of it has; any one spelling per entry)
LAYOUTS: dict[str, tuple[str, tuple[tuple[str, ...], ...]]] = {
    "crows-pairs": (
        "a comma-separated CSV with sent_more, sent_less, stereo_antistereo, bias_type",
        (("sent_more",), ("sent_less",), ("stereo_antistereo",), ("bias_type",)),
    ),
    "sos": (
        "a comma-separated CSV with profane, nice, identity, attribute, marginalised "
        "(or the authors' Toxic_sent, Non_Toxic_sent, identity, bias_type)",
        (("profane", "toxic_sent"), ("nice", "non_toxic_sent")),
    ),
    "sofa": (
        "a comma-separated CSV with id, category, identity, stereotype (target and probe optional)",
        (("id",), ("category",), ("identity",), ("stereotype",)),
    ),
    "honest": (
        "a tab-separated TSV with template_masked (one [M]), identity and a grouping column",
        (("template_masked",), ("identity",)),
    ),
    "stereoset": (
        'the published JSON: {"version", "data": {"intrasentence": [...], "intersentence": [...]}}',
        (("intrasentence", "intersentence"),),
    ),
}


def _norm(name: str) -> str:
    return name.strip().strip('"').strip().lower().replace("-", "_").replace(" ", "_")


def _first_lines(path: Path, n: int = 3) -> list[str]:
    try:
        with open(path, encoding="utf-8-sig", errors="replace") as fh:
            return [line.rstrip("\r\n") for _, line in zip(range(n), fh)]
    except OSError:
        return []


def near_kind(columns: list[str]) -> tuple[str, list[str]] | None:
    """(kind, the columns it lacks) for the kind whose columns the header half has or more."""
    have = {_norm(c) for c in columns}
    best = None
    for kind, (_, wanted) in LAYOUTS.items():
        if kind == "stereoset":
            continue
        found = [w for w in wanted if any(_norm(x) in have for x in w)]
        missing = [w[0] for w in wanted if w not in found]
        if found and len(found) * 2 >= len(wanted) and (best is None or len(found) > best[2]):
            best = (kind, missing, len(found))
    return (best[0], best[1]) if best else None


def hint(path: Path) -> str:
    path = Path(path)
    if not path.is_file():
        return ""
    lines = [line for line in _first_lines(path) if line.strip()]
    if not lines:
        return "the file is empty"
    first = lines[0]
    if first.lstrip().startswith("{"):
        try:
            record = json.loads(first)
        except ValueError:
            record = None
        if isinstance(record, dict) and not ({"data", "version"} & set(record)):
            near = near_kind(list(record))
            named = f" of {near[0]} ({LAYOUTS[near[0]][0]})" if near else ""
            return (
                f"line 1 is one JSON record with fields {', '.join(record)}: a JSON-lines export (as a Hugging "
                f"Face dataset saves one){named}, which this kind does not read as JSON lines; save it in the "
                "benchmark's published layout (e.g. the dataset's to_csv)"
            )
        return ""
    for delimiter, name in ((";", "semicolons"), ("|", "vertical bars")):
        if delimiter in first and "," not in first and "\t" not in first:
            near = near_kind(first.split(delimiter))
            named = f" with {near[0]}'s columns" if near else ""
            return (
                f"line 1 is separated by {name}{named} ({first[:80]!r}): the kinds read comma-separated CSV "
                "(HONEST: tab-separated); save the file with commas"
            )
    for delimiter, shape in ((",", "comma"), ("\t", "tab")):
        if delimiter in first:
            near = near_kind(first.split(delimiter))
            if near is not None:
                kind, missing = near
                lacks = f", but lacks {', '.join(missing)}" if missing else ""
                wrong_sep = (kind == "honest") != (delimiter == "\t")
                sep = f"; it is {shape}-separated" if wrong_sep else ""
                return (
                    f"the header looks like {kind}'s layout ({LAYOUTS[kind][0]}){lacks}{sep}; "
                    f"check it, or pass --kind {kind} for that kind's own messages"
                )
    return ""


def format_hint(path: Path) -> str:
    """hint(), only when it names a delimiter or layout mistake (for a kind's own messages,
    where "pass --kind" would be no news)."""
    found = hint(path)
    return found if found.startswith("line 1 ") else ""


def other_kind(path: Path) -> str:
    """A sentence naming the kind a file or folder that the default (loosest) kind would take
    seems to belong to, or "": a JSON file shaped like StereoSet's, or a folder (without YAML
    templates) holding a table in another kind's layout (a Hugging Face download, say)."""
    path = Path(path)
    if path.is_file() and path.suffix.lower() == ".json":
        try:
            with open(path, encoding="utf-8-sig") as fh:
                head = fh.read(1 << 16)
        except (OSError, UnicodeDecodeError):
            return ""
        if any(f'"{key}"' in head for key in ("intrasentence", "intersentence")):
            return (
                f"{path.name} looks like a StereoSet file ({LAYOUTS['stereoset'][0]}) that does not parse as one; "
                "pass --kind stereoset for that kind's own messages"
            )
        return ""
    if path.is_dir() and not any(path.rglob("*.yaml")) and not any(path.rglob("*.yml")):
        tables = sorted(f for f in path.rglob("*") if f.is_file() and f.suffix.lower() in (".csv", ".tsv", ".jsonl"))
        for table in tables[:20]:
            found = hint(table)
            for kind in LAYOUTS:
                if f" of {kind} " in found or f"like {kind}'s layout" in found or f"with {kind}'s columns" in found:
                    return f"{table.relative_to(path)} in this folder is in {kind}'s layout or close to it ({found})"
            if found:
                continue
            near = near_kind(_columns_of(table))
            if near is not None:
                return (
                    f"{table.relative_to(path)} in this folder is a {near[0]} table; give that file with "
                    f"--kind {near[0]}"
                )
    return ""


def _columns_of(path: Path) -> list[str]:
    lines = _first_lines(path, 1)
    if not lines:
        return []
    first = lines[0]
    if first.lstrip().startswith("{"):
        try:
            record = json.loads(first)
        except ValueError:
            return []
        return list(record) if isinstance(record, dict) else []
    return first.split("\t" if "\t" in first else ",")
