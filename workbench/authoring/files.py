"""Reading template files (YAML or JSON) while keeping line numbers for messages."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..core.errors import Problem, did_you_mean, display_path
from ..core.text import MAX_FIELD_CHARS, MAX_LINE_CHARS, MAX_TEMPLATE_BYTES, long_line

TEMPLATE_SUFFIXES = (".yaml", ".yml", ".json")
TABLE_SUFFIX = ".parquet"  # an imported table (authoring/imported.py)


@dataclass
class RawFile:
    """A parsed file: plain data plus a way to find the line of any field path."""

    path: Path
    data: Any
    shown: str
    _yaml_root: Any = None
    field_map: dict[str, str] = field(default_factory=dict)

    def line(self, path: tuple) -> int | None:
        """1-based line of the deepest existing node on `path` (YAML only)."""
        node, line = self._yaml_root, None
        if node is None:
            return None
        for key in path:
            lc = getattr(node, "lc", None)
            if lc is None:
                break
            try:
                if isinstance(key, int):
                    line = lc.item(key)[0] + 1
                    node = node[key]
                else:
                    line = lc.key(key)[0] + 1
                    node = node[key]
            except (KeyError, IndexError, TypeError):
                break
        if line is None and getattr(self._yaml_root, "lc", None) is not None:
            line = self._yaml_root.lc.line + 1
        return line

    def problem(self, path: tuple, message: str, severity: str = "error") -> Problem:
        text = format_path(path)
        for own, original in sorted(self.field_map.items(), key=lambda kv: -len(kv[0])):
            if text == own or text.startswith(own + ".") or text.startswith(own + "["):
                text = original + text[len(own) :]
                break
        return Problem(self.shown, self.line(path), text, message, severity)


def unknown_fields(raw: "RawFile", path: tuple, mapping: dict, known, problems: list) -> None:
    """An error per key of `mapping` outside `known`, naming the nearest known key: a misspelt
    key must never be read as absent (a pair's `directon` would silently take the default)."""
    known = sorted(known)
    for key in sorted(set(mapping) - set(known), key=str):
        problems.append(
            raw.problem(path + (key,), f"unknown field {key!r}: {did_you_mean(key, known)}(known: {', '.join(known)})")
        )


def nested_unknown_fields(raw: "RawFile", data: Any, schema: dict[str, frozenset], problems: list) -> None:
    """Check the mappings that `schema` names by pattern: dotted keys, `[]` for every entry of a
    list, `*` for every key of a mapping (e.g. `pairs.[]`, `identities.*`). Entries of another
    type are left to the kind's parser, which reports them with their own message."""
    for pattern, known in schema.items():
        nodes = [((), data)]
        for part in pattern.split("."):
            step = []
            for path, node in nodes:
                if part == "[]" and isinstance(node, list):
                    step += [(path + (i,), v) for i, v in enumerate(node)]
                elif part == "*" and isinstance(node, dict):
                    step += [(path + (k,), v) for k, v in node.items()]
                elif isinstance(node, dict) and part in node:
                    step.append((path + (part,), node[part]))
            nodes = step
        for path, node in nodes:
            if isinstance(node, dict):
                unknown_fields(raw, path, node, known, problems)


def format_path(path: tuple) -> str:
    out = ""
    for key in path:
        if isinstance(key, int):
            out += f"[{key}]"
        else:
            out += ("." if out else "") + str(key)
    return out


def _to_plain(node: Any) -> Any:
    if isinstance(node, dict):
        return {str(k): _to_plain(v) for k, v in node.items()}
    if isinstance(node, list):
        return [_to_plain(v) for v in node]
    return node


def _long_fields(node: Any, path: tuple = ()):
    """(path, length) of every string in a parsed file longer than MAX_FIELD_CHARS."""
    if isinstance(node, str):
        if len(node) > MAX_FIELD_CHARS:
            yield path, len(node)
    elif isinstance(node, dict):
        for k, v in node.items():
            yield from _long_fields(v, (*path, str(k)))
    elif isinstance(node, list):
        for i, v in enumerate(node):
            yield from _long_fields(v, (*path, i))


def read_file(path: Path) -> tuple[RawFile | None, list[Problem]]:
    """A template file parsed (JSON or YAML), within the size limits of `core.text`."""
    raw, problems = _read_file(path)
    if raw is not None:
        problems = [
            raw.problem(where, f"{n:,} characters, over the limit of {MAX_FIELD_CHARS:,} for one field")
            for where, n in _long_fields(raw.data)
        ]
        if problems:
            return None, problems
    return raw, problems


def _read_file(path: Path) -> tuple[RawFile | None, list[Problem]]:
    shown = display_path(path)
    try:
        if path.stat().st_size > MAX_TEMPLATE_BYTES:
            return None, [
                Problem(
                    shown,
                    None,
                    "",
                    f"{path.stat().st_size:,} bytes, over the limit of {MAX_TEMPLATE_BYTES:,} for a template file",
                )
            ]
        data = path.read_bytes()
        text = data.decode("utf-8-sig")  # a byte-order mark (as some editors write) is not part of the text
    except UnicodeDecodeError as exc:
        line = data[: exc.start].count(b"\n") + 1
        return None, [Problem(shown, line, "", f"not UTF-8 text ({exc.reason} at byte {exc.start}): save it as UTF-8")]
    except OSError as exc:
        return None, [Problem(shown, None, "", f"cannot read file: {exc.strerror}")]
    if not text.strip():
        return None, [Problem(shown, None, "", "file is empty")]
    long = long_line(text, MAX_LINE_CHARS)
    if long:
        return None, [
            Problem(
                shown,
                long[0],
                "",
                f"a line of {long[1]:,} characters, over the limit of {MAX_LINE_CHARS:,} for a template line",
            )
        ]
    if path.suffix == ".json":
        try:
            data = json.loads(text)
        except json.JSONDecodeError as exc:
            return None, [Problem(shown, exc.lineno, "", f"invalid JSON: {exc.msg} (column {exc.colno})")]
        return RawFile(path, data, shown), []
    from ruamel.yaml import YAML
    from ruamel.yaml.error import MarkedYAMLError, YAMLError

    yaml = YAML(typ="rt")
    try:
        root = yaml.load(text)
    except MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        line = mark.line + 1 if mark is not None else None
        return None, [Problem(shown, line, "", f"invalid YAML: {exc.problem or exc.context}")]
    except YAMLError as exc:
        return None, [Problem(shown, None, "", f"invalid YAML: {exc}")]
    return RawFile(path, _to_plain(root), shown, _yaml_root=root), []


def find_template_files(paths: list[Path], tables: bool = False) -> tuple[list[Path], list[Problem]]:
    """Expand folders into their template files (sorted, recursive). `tables`: the folders hold
    imported tables (authoring/imported.py), so one without template files is no problem."""
    files, problems = [], []
    for p in paths:
        if p.is_dir():
            found = sorted(f for f in p.rglob("*") if f.suffix in TEMPLATE_SUFFIXES and f.is_file())
            if not found and not tables:
                problems.append(
                    Problem(display_path(p), None, "", "no template files (*.yaml, *.yml, *.json) in folder")
                )
            files.extend(found)
        elif p.is_file():
            if not (tables and p.suffix == TABLE_SUFFIX):  # a table given as the templates: read as one
                files.append(p)
        else:
            problems.append(Problem(display_path(p), None, "", "no such file or folder"))
    return files, problems


def find_tables(paths: list[Path]) -> list[Path]:
    """The imported tables among `paths` (a folder's, recursively, sorted; a hidden file is not one)."""
    out: list[Path] = []
    for p in paths:
        if p.is_dir():
            out += sorted(f for f in p.rglob(f"*{TABLE_SUFFIX}") if f.is_file() and not f.name.startswith("."))
        elif p.is_file() and p.suffix == TABLE_SUFFIX:
            out.append(p)
    return out


def fail_on_errors(problems: list[Problem], what: str, command: str) -> None:
    """Raise a TemplateError listing the errors (warnings pass): what `run` does with bad templates."""
    from ..core.errors import TemplateError

    errors = [p for p in problems if p.severity == "error"]
    if errors:
        raise TemplateError(f"{len(errors)} problem(s) in {what}; run `{command}` for the list", errors)


def nonempty_string(value: Any, raw: RawFile, path: tuple, problems: list[Problem], what: str) -> str | None:
    """`value` when it is a string with something in it; else None and a problem at `path`."""
    if not isinstance(value, str):
        shown = "nothing" if value is None else type(value).__name__
        problems.append(raw.problem(path, f"{what} must be a string, not {shown}"))
        return None
    if not value.strip():
        problems.append(raw.problem(path, f"{what} is empty"))
        return None
    return value


class ReadsTemplateFiles:
    """For the stage that reads a project's template files (every kind's `expand`): where they
    are (`--templates-dir` or `[project] templates`), the setting as written (relative, so a
    copied workspace is not stale because its path changed), and each file's content hash as
    the stage's external input."""

    def folder(self, ctx) -> Path:
        given = ctx.options.get("templates_dir")
        return Path(given) if given else ctx.config.path("templates")

    def settings(self, ctx) -> dict:
        given = ctx.options.get("templates_dir")
        return {"templates": str(given) if given else ctx.config.project.templates}

    reads_tables = False  # the stage reads imported tables too (authoring/imported.py)

    def external_inputs(self, ctx) -> dict[str, str]:
        from ..core.ids import file_sha256

        folder = self.folder(ctx)
        files, _ = find_template_files([folder])
        files += find_tables([folder]) if self.reads_tables else []
        root = folder if folder.is_dir() else folder.parent
        return {str(f.relative_to(root)): file_sha256(f) for f in files}


def dump_yaml(data) -> str:
    """`data` as a template file's YAML text (keys in order, long lines kept whole), as `read_file` reads it."""
    import io

    from ruamel.yaml import YAML

    yaml = YAML()
    yaml.width = 10**6
    yaml.allow_unicode = True
    out = io.StringIO()
    yaml.dump(data, out)
    return out.getvalue()
