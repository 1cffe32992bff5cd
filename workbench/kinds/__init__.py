"""The built-in kinds' packages, and detection across every installed kind.

The registry itself (entry points, `get`, `of_config`, ...) and the contract are one layer below
the shared packages, in `workbench/contract/`; they are re-exported here for the command line and
for plugins written against this name. Detection lives here rather than there: it asks every
kind's evaluator whether it reads a file, resolves Hub sources (a shared package) and, when none
does, explains from the kinds' published layouts (`layout.py`) what the file nearly is. Shared
code is handed it by the command line (see `sources/checks.py`).
"""

from __future__ import annotations

from pathlib import Path

from ..core.errors import display_path as _shown
from ..contract import loader  # noqa: F401  (re-exported)
from ..contract.kind import AnnotatorWords, EvaluatorOption, Field, ItemQuestion, Kind, ReleaseLayout  # noqa: F401
from ..contract.loader import KindBroken, call, import_module, warn  # noqa: F401
from ..contract.registry import (  # noqa: F401  (the registry, re-exported)
    BUILT_IN,
    DEFAULT_KIND,
    GROUP,
    PARTS,
    Entry,
    broken_part,
    get,
    listing,
    loadable,
    names,
    of_config,
    pipeline_for,
    recognises,
    register,
    settings_problems,
    skipped,
)


def detect(source: str, report=skipped) -> str:
    """The kind of a local file or release folder, or of a Hub release ORG/NAME[@REVISION]
    (fetched into the Hub cache, where its evaluator finds it again): its manifest's `kind`, else
    the first kind whose evaluator recognises its shape (the default kind last: its shapes are
    the loosest). A source no kind recognises is an InputError, never taken for a default kind.
    A broken kind is skipped and given to `report` with the source (default: a warning on stderr)."""
    from .. import sources
    from ..core.errors import InputError

    found = sources.resolve(source, verify=False)
    if found.path is None or not found.path.exists():
        raise InputError(f"dataset {source!r} is neither a local folder/file nor ORG/NAME[@REVISION]")
    if found.manifest is not None and found.manifest.get("kind"):
        return found.manifest["kind"]
    for kind in sorted(loadable(), key=lambda k: k.name == DEFAULT_KIND):
        if kind.evaluator is None:
            continue
        if recognises(kind, found.path, source, report):
            if kind.name == DEFAULT_KIND:  # the loosest shapes: say so when the source looks like another kind's
                from .layout import other_kind

                why = other_kind(found.path)
                if why:
                    raise InputError(f"{source}: {why}")
            return kind.name
    if found.path.is_dir():
        raise InputError(
            f"{source} is neither a release (manifest.json and data/) nor a folder of templates or data "
            f"that a kind recognises; pass --kind ({', '.join(names())})"
        )
    from .layout import hint

    why = hint(found.path)
    raise InputError(
        f"{source}: no kind of benchmark recognises this file's layout"
        f"{': ' + why if why else ''}; pass --kind ({', '.join(names())})"
    )


def _detect(kind: str, path: Path, report) -> bool:
    """Whether `kind` recognises `path`; a kind that cannot load or whose detect fails is
    reported and skipped (kinds.recognises), unless it was named with --kind."""
    try:
        found = get(kind)
    except KindBroken as exc:
        report(exc, _shown(path))
        return False
    return found.evaluator is not None and recognises(found, path, _shown(path), report)


def kind_of_data(folder: Path, forced: str | None, report=None) -> tuple[str, str]:
    """(kind, what to score) for a release folder without a manifest: the first kind that
    recognises the folder, else one of its data files (then that file is scored); the default
    kind last, as its shapes (Parquet samples, template files) are the loosest."""
    from ..core.errors import InputError
    from ..sources.checks import data_files

    report = report or skipped
    candidates = [forced] if forced else sorted(n for n in names() if n != DEFAULT_KIND) + [DEFAULT_KIND]
    for kind in candidates:
        if forced:  # the kind the user named: its failure is the command's, in one line
            get(kind).evaluator_module()
        if _detect(kind, folder, report):
            return kind, str(folder)
        for f in data_files(folder):
            if _detect(kind, f, report):
                return kind, str(f)
    if forced:
        raise InputError(f"{_shown(folder)}: no data file in it has the layout of a {forced} release")
    raise InputError(
        f"{_shown(folder)}: no manifest.json, and none of its data files has the layout of a "
        f"known kind; pass --kind ({', '.join(names())})"
    )
