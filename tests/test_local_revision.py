"""A local checkpoint's revision is computed once per change of its files: a freshness check
(`status`, `run`) of a large model folder costs a few stat calls, not a read of every file."""

from __future__ import annotations

import os
import shutil

from workbench.models import loading


def test_a_model_folder_is_hashed_once_until_one_of_its_files_changes(fixture_models, tmp_path, monkeypatch):
    """The index lives in the user's cache folder (conftest points XDG_CACHE_HOME at the session's own)."""
    folder = tmp_path / "model"
    shutil.copytree(fixture_models["clm-gpt2"], folder)
    hashed = []
    real = loading.local_revision
    monkeypatch.setattr(loading, "local_revision", lambda f: hashed.append(f) or real(f))

    first = loading.fingerprint(str(folder))
    again = loading.fingerprint(str(folder))
    assert first == again == real(folder) and len(hashed) == 1  # the second check read no file
    assert (loading.Path(os.environ["XDG_CACHE_HOME"]) / "workbench" / loading.REVISION_INDEX).is_file()

    config = folder / "config.json"
    config.write_text(config.read_text(encoding="utf-8").replace("}", ', "note": "edited"}', 1), encoding="utf-8")
    changed = loading.fingerprint(str(folder))
    assert changed != first and len(hashed) == 2 and changed == real(folder)
