"""What `workbench evaluate` scores, checked before any model loads.

A release folder is checked against its manifest (every file's sha256; a cut, changed or
missing file is refused). A folder without a manifest cannot be checked, so it is refused
unless the user says `--unverified`; then every data file in it is still decoded strictly
(Parquet, CSV/TSV, JSON: a corrupt or mis-encoded file ends with its path and what is wrong),
and the output carries a warning. A Hub release is checked against its manifest when fetched.

The kind of a source is read from its manifest, or from its data's shape (each kind's
`detect`), never assumed: a folder of pairs without a manifest is scored as its kind,
and a source no kind recognises is refused with the `--kind` to give.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Protocol

from ..core.errors import InputError, display_path


@dataclass
class Checked:
    kind: str  # the kind every source is of
    sources: list[str]  # what to hand the kind's evaluator
    warnings: list[str] = field(default_factory=list)  # for the terminal and the JSON
    skipped: list[str] = field(default_factory=list)  # broken kinds left out of detection (terminal only)


def is_release_folder(path: Path) -> bool:
    """A release, or what is left of one: a manifest or a data/ folder."""
    return path.is_dir() and ((path / "manifest.json").is_file() or (path / "data").is_dir())


def data_files(folder: Path) -> list[Path]:
    data = folder / "data"
    return sorted(f for f in data.rglob("*") if f.is_file()) if data.is_dir() else []


def check_data_files(folder: Path) -> None:
    """Every data file decoded as its reader will: Parquet read whole, text as UTF-8, JSON parsed;
    a CSV and a Parquet of the same name agree (copies.check_data)."""
    from ..core.files import read_parquet
    from ..core.text import read_json, read_text
    from .copies import check_data

    files = data_files(folder)
    if not files:
        raise InputError(f"{display_path(folder)}: no data files (expected data/...)")
    for f in files:
        suffix = f.suffix.lower()
        if suffix == ".parquet":
            read_parquet(f)
        elif suffix == ".json":
            read_json(f, "data file")
        elif suffix in (".csv", ".tsv", ".jsonl", ".txt"):
            read_text(f, "data file")
    # A table held twice (data/NAME.csv and data/NAME.parquet) must agree, as in a verified release.
    check_data(
        folder,
        [f.relative_to(folder).as_posix() for f in files],
        after="nothing was scored: rebuild the release or download it again",
    )


class Detection(Protocol):
    """How the kind of a source is found, handed by the command line (the kinds' detection,
    `workbench/kinds/__init__.py`): shared code never looks a kind up itself."""

    DEFAULT_KIND: str

    def detect(self, source: str, report: Callable) -> str: ...

    def kind_of_data(self, folder: Path, forced: str | None, report: Callable) -> tuple[str, str]: ...


def check(specs: list[str], forced: str | None, unverified: bool, kinds: Detection) -> Checked:
    """Check every source and find their kind (see the module docstring) by `kinds`' detection."""
    from . import verify_release

    found: list[str] = []
    sources: list[str] = []
    warnings: list[str] = []
    skipped: dict[
        str, str
    ] = {}  # each broken kind said once (with the first file it missed), however many were looked at

    def report(exc, shown: str) -> None:
        skipped.setdefault(str(exc), f"{exc}; skipped while recognising {shown}")

    for spec in specs:
        path = Path(spec).expanduser()
        if is_release_folder(path) and (path / "manifest.json").is_file():
            manifest = verify_release(path)  # a cut or edited release is refused, not scored
            kind = forced or manifest.get("kind") or kinds.detect(spec, report)
        elif is_release_folder(path):
            if not unverified:
                raise InputError(
                    f"{display_path(path)}: no manifest.json, so its files cannot be checked against the "
                    "release; download the release again, or pass --unverified to score it as it is"
                )
            check_data_files(path)
            kind, spec = kinds.kind_of_data(path, forced, report)
            warnings.append(
                f"{display_path(path)}: scored --unverified: it has no manifest.json, so its files were "
                "not checked against a release"
            )
        else:
            kind = forced or kinds.detect(spec, report)
        found.append(kind)
        sources.append(spec)
    kind = forced or (found[0] if found else kinds.DEFAULT_KIND)
    if len(set(found)) > 1:
        raise InputError(
            "the sources are of different kinds ("
            + ", ".join(f"{s}: {k}" for s, k in zip(specs, found))
            + "); evaluate one kind at a time"
        )
    return Checked(kind, sources, warnings, list(skipped.values()))
