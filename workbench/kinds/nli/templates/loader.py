"""Load a set of template files (project format or BBNLI JSON), collecting every problem."""

from __future__ import annotations

from pathlib import Path

from ....core.errors import Problem
from . import bbnli
from ....authoring.files import RawFile, fail_on_errors, find_template_files, read_file
from .schema import Template, check_template


def load_one(path: Path) -> tuple[Template | None, list[Problem]]:
    raw, problems = read_file(path)
    if raw is None:
        return None, problems
    if bbnli.is_bbnli(raw.data):
        converted, conv_problems = bbnli.convert(raw)
        problems += conv_problems
        raw = RawFile(raw.path, converted, raw.shown, field_map=raw.field_map)
    template, more = check_template(raw)
    problems += more
    if any(p.severity == "error" for p in problems):
        template = None
    return template, problems


def load_templates(paths: list[Path]) -> tuple[list[Template], list[Problem]]:
    """Every file is checked even when an earlier one is broken."""
    files, problems = find_template_files(paths)
    templates: list[Template] = []
    seen: dict[str, Template] = {}
    for f in files:
        t, found = load_one(f)
        problems += found
        if t is None:
            continue
        if t.id in seen:
            problems.append(Problem(str(f), None, "id", f"template id {t.id!r} is also used by {seen[t.id].path}"))
            continue
        seen[t.id] = t
        templates.append(t)
    return templates, problems


def load_templates_or_fail(paths: list[Path]) -> tuple[list[Template], list[Problem]]:
    """As load_templates, but raise when any error (not warning) was found."""
    templates, problems = load_templates(paths)
    fail_on_errors(problems, "templates", "workbench templates lint")
    return templates, problems
