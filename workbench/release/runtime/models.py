"""Naming a model as a standalone evaluate.py does: a checkpoint folder, its revision a hash of
its files (workbench's `local_revision`), or a Hub name, its revision the commit the local Hub
cache resolved it to. Unlike workbench's `models.loading.resolve`, a Hub name is never looked
up online just to name its revision: the script must run offline on a cached model.
"""

from __future__ import annotations

from pathlib import Path

from ...models.loading import (
    ModelRef,
    a_file_not_a_folder,
    is_path_like,
    local_revision,
)
from .release import Refused


def model_revision(name: str, location: str) -> str:
    """'local' for a checkpoint folder, else the commit the Hub cache resolved the name to
    ('unknown' when it is not cached)."""
    if location != name or Path(name).is_dir():
        return "local"
    try:
        from huggingface_hub import try_to_load_from_cache

        found = try_to_load_from_cache(name, "config.json")
    except Exception:  # an odd name or cache layout: the scores are still valid, the revision unknown
        return "unknown"
    return Path(found).parent.name if isinstance(found, str) else "unknown"


def model_ref(name: str) -> ModelRef:
    """The checkpoint `name` names, for the scoring layer: a folder with config.json, or a Hub
    name (loaded at its cached commit, else `main`)."""
    folder = Path(name).expanduser()
    if (folder / "config.json").is_file():
        return ModelRef(name, str(folder.resolve()), local_revision(folder))
    if folder.is_file():
        raise Refused(a_file_not_a_folder(name))
    if is_path_like(name) or folder.is_dir():
        raise Refused(
            f"model {name!r}: {'a folder without config.json' if folder.is_dir() else 'no such folder'}; "
            "give a checkpoint folder (one with config.json) or a Hub model name"
        )
    revision = model_revision(name, name)
    return ModelRef(name, name, "main" if revision == "unknown" else revision)
