"""No path of the maintainer's machine goes into a release (issue 55).

A model, a lexicon or a folder the configuration names by an absolute path is named in a release
as the card names it: its folder's name, marked as local (`local_names`, applied by `without`),
the release rows' provenance included. Then, before the build moves its folder into place, every
string of every file it wrote is read (Parquet cells, their structs and lists and the JSON inside
them; JSON; text) for a path of this machine (`refuse_machine_paths`): the project folder, the
home folder, the working directory, the temporary folders, the folders the configuration names,
and any other absolute path that exists here outside the system's own folders. One is enough to
refuse the build in one line naming the file, the column or field and the row or line.
"""

from __future__ import annotations

import json
import os
import re
import tempfile
from collections.abc import Iterator
from pathlib import Path

from ..core.errors import InputError

# Folders every machine has: a path under them (`/usr/bin/env`, `/dev/null`) says nothing of this one.
SYSTEM = ("/bin", "/boot", "/dev", "/etc", "/lib", "/lib32", "/lib64", "/proc", "/run", "/sbin", "/sys", "/usr")
# Where a path may start: not inside a word, a relative path or a `~` path.
_START = r"(?<![\w.~-])"
# Any absolute path of two components or more (one alone, `/s`, is as likely prose).
_ABSOLUTE = re.compile(_START + r"/[\w.@+-]+(?:/[\w.@+-]+)+")


def _is_local(value: str) -> bool:
    return value.startswith("~") or Path(value).is_absolute()


def strings(value) -> Iterator[str]:
    """Every string in `value` (nested dicts, lists and tuples), the keys of dicts too."""
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for k, v in value.items():
            yield from strings(k)
            yield from strings(v)
    elif isinstance(value, (list, tuple)):
        for v in value:
            yield from strings(v)


def local_names(values) -> dict[str, str]:
    """Every string in `values` that is an absolute or `~` path -> how a release names it: the
    shortest tail of its path that tells it from the others found (its folder's name, unless two
    share it: `runA/checkpoint-500`), marked as local."""
    from ..core.names import shortest_names

    found = sorted({s for s in strings(values) if _is_local(s)})
    shown = shortest_names(found)
    return {path: f"{shown[path]} (a local folder)" for path in found}


def without(local: dict[str, str], value):
    """`value` (text, or data of dicts, lists and tuples) with the paths in `local` replaced by
    their names, longest first, in every string (dict keys too). A dict, list or tuple none of
    whose strings changes is returned itself, not copied (a million release rows are not held twice)."""
    order = sorted(local, key=len, reverse=True)

    def renamed(v):
        if isinstance(v, str):
            for path in order:
                if path in v:
                    v = v.replace(path, local[path])
            return v
        if isinstance(v, dict):
            pairs = [(renamed(k), renamed(x)) for k, x in v.items()]
            same = all(a is k and b is x for (a, b), (k, x) in zip(pairs, v.items()))
            return v if same else dict(pairs)
        if isinstance(v, (list, tuple)):
            items = [renamed(x) for x in v]
            return v if all(a is b for a, b in zip(items, v)) else type(v)(items)
        return v

    return renamed(value) if order else value


def machine_paths(config) -> list[str]:
    """The folders of this machine a release must never name, longest first: the project, the
    home folder, the working directory, the temporary folders and every path the configuration
    names (as written, expanded and resolved)."""
    named = [
        str(config.root),
        str(Path.home()),
        os.getcwd(),
        tempfile.gettempdir(),
        "/tmp",
        "/var/tmp",
        *(os.environ.get(v, "") for v in ("TMPDIR", "TEMP", "TMP")),
        *(s for s in strings(config.model_dump(mode="json")) if _is_local(s)),
    ]
    found = set()
    for path in filter(None, named):
        expanded = os.path.expanduser(path)
        for form in (path, expanded, os.path.abspath(expanded), os.path.realpath(expanded)):
            form = form.rstrip("/")
            if len(Path(form).parts) >= 2 and not form.startswith("~"):  # "/" itself names nothing
                found.add(form)
    return sorted(found, key=len, reverse=True)


class _Finder:
    """Finds the first path of this machine in a string."""

    def __init__(self, config):
        paths = machine_paths(config)
        alternatives = "|".join(map(re.escape, paths))
        self.named = re.compile(_START + f"(?:{alternatives})" + r"(?![\w.@+-])(?:/[\w.@+-]+)*") if paths else None
        self.seen: dict[str, bool] = {}

    def __call__(self, text: str) -> str | None:
        if self.named is not None and (hit := self.named.search(text)):
            return hit.group(0)
        for hit in _ABSOLUTE.finditer(text):
            if self._exists_here(hit.group(0)):
                return hit.group(0)
        return None

    def _exists_here(self, path: str) -> bool:
        """The path, or a folder above it other than the top one, exists here, outside SYSTEM."""
        if path not in self.seen:
            parts = Path(path).parts
            self.seen[path] = not path.startswith(tuple(f"{s}/" for s in SYSTEM)) and any(
                os.path.lexists(Path(*parts[:n])) for n in range(3, len(parts) + 1)
            )
        return self.seen[path]


def _in_value(value, field: str, find) -> tuple[str, str] | None:
    """(field path, the machine's path) of the first string in `value` naming one; a string
    holding JSON is looked into, so the field names where inside it."""
    if isinstance(value, str):
        hit = find(value)
        if hit is not None and value[:1] in "{[":
            try:
                inner = _in_value(json.loads(value), field, find)
            except ValueError:
                inner = None
            if inner is not None:
                return inner
        return (field, hit) if hit is not None else None
    if isinstance(value, dict):
        for k, v in value.items():
            if (
                found := _in_value(k, field, find) or _in_value(v, f"{field}.{k}" if field else str(k), find)
            ) is not None:
                return found
    elif isinstance(value, (list, tuple)):
        for i, v in enumerate(value):
            if (found := _in_value(v, f"{field}[{i}]", find)) is not None:
                return found
    return None


def _in_file(path: Path, find) -> tuple[str, str] | None:
    """(where in the file, the machine's path) of the first path of this machine the file names."""
    if path.suffix == ".parquet":
        import pyarrow.parquet as pq

        table = pq.read_table(path)
        for column in table.column_names:
            for row, value in enumerate(table.column(column).to_pylist(), start=1):
                if (found := _in_value(value, column, find)) is not None:
                    return f"column {found[0]}, row {row}", found[1]
        return None
    text = path.read_bytes().decode("utf-8", errors="replace")
    if path.suffix == ".json":
        try:
            data = json.loads(text)
        except ValueError:
            data = None
        if data is not None:
            found = _in_value(data, "", find)
            return (f"field {found[0] or '(top)'}", found[1]) if found is not None else None
    for number, line in enumerate(text.splitlines(), start=1):
        if (hit := find(line)) is not None:
            return f"line {number}", hit
    return None


def refuse_machine_paths(folder: Path, config) -> None:
    """Read every file under `folder` (a release being built) for a path of this machine; the
    first found refuses the build in one line naming the file, where in it, and the path."""
    find = _Finder(config)
    for path in sorted(p for p in folder.rglob("*") if p.is_file()):
        found = _in_file(path, find)
        if found is not None:
            where, named = found
            raise InputError(
                f"{path.relative_to(folder).as_posix()}: {where} names {named}, a path of this machine; a release "
                "never names one, so nothing was built (name it relative to the project, or by a Hub id, or leave it out)"
            )
