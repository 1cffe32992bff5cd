"""Release versions: X.Y.Z, and where a project's builds of them live."""

from __future__ import annotations

from pathlib import Path

from ..core.config import Config
from ..core.errors import InputError
from ..sources import VERSION

__all__ = ["VERSION", "parse_version", "export_dir", "previous_version"]


def parse_version(version: str) -> tuple[int, int, int]:
    m = VERSION.fullmatch(version or "")  # fullmatch: "1.0.0\n" is not a version
    if not m:
        raise InputError(f"version {version!r} is not X.Y.Z (semantic versioning, e.g. 1.0.0)")
    return tuple(int(x) for x in m.groups())


def export_dir(config: Config, version: str) -> Path:
    return config.path("exports") / config.project.name / version


def previous_version(config: Config, version: str) -> str | None:
    folder = config.path("exports") / config.project.name
    if not folder.is_dir():
        return None
    older = [
        p.name
        for p in folder.iterdir()
        if VERSION.match(p.name) and parse_version(p.name) < parse_version(version) and (p / "manifest.json").is_file()
    ]
    return max(older, key=parse_version) if older else None
