"""What a result scored, said so that another person can find exactly the same inputs again.

Every `workbench evaluate` output (the JSON, and the provenance file beside each CSV or items
file) carries this record: each data set as given and as resolved (an absolute path, or a Hub
repository with the tag and the commit it was read at), the sha256 of each data file scored, the
release's name, version and manifest hash where it is a release, and which published copy it is
(`source_copy`: "name version" from the table of known copies, sources/known.py, or "unknown"; a
release built by a renewal also says which copy it renews, `origin_copy`, and which code of its kind its evaluate.py
runs, `kind_code`); the kind, the installed kind's package, version and code hash (`kind_code`)
and its options; each
model as given, where it was read from and its revision; the intervals' seed and resamples; the
score cache and how many values came from it in this run; and workbench's version.
"""

from __future__ import annotations

import hashlib
from pathlib import Path

from .. import __version__
from ..core.ids import file_sha256


def provenance(request) -> dict:
    """The record for one evaluate request (see the module's docstring)."""
    from ..core.cache import usage

    cache = None
    if request.cache_path is not None:
        now = usage(request.cache_path)
        start = request.cache_usage_at_start or {"read": 0, "written": 0}
        cache = {
            "path": str(Path(request.cache_path).resolve()),
            "values_read": now["read"] - start["read"],
            "values_computed": now["written"] - start["written"],
        }
    record = {
        "workbench_version": __version__,
        "kind": request.kind or None,
        "kind_code": request.kind_code,  # the installed kind's package, version and code hash
        "datasets": [dataset_record(spec, request.kind or None) for spec in request.sources],
        "options": {"score_rule": request.score_rule, **{k: _plain(v) for k, v in request.options.items()}},
        "models": {name: model_record(name, request.root, request.runtimes.get(name)) for name in request.models},
        "intervals": {
            "level": request.intervals.level,
            "resamples": request.intervals.resamples,
            "seed": request.intervals.seed,
        },
        "cache": cache,
    }
    if request.predictions is not None:
        from .output import prediction_files

        files = {name: _file_record(path) for name, path in prediction_files(request).items()}
        record["predictions"] = _file_record(Path(request.predictions))
        record["prediction_files"] = files  # each model's file, by the model it stands for
    return record


def _file_record(path: Path) -> dict:
    return {"path": str(path.resolve()), "sha256": file_sha256(path) if path.is_file() else None}


def dataset_record(spec: str, kind: str | None = None) -> dict:
    """One data set: a local file (its sha256), a release folder (its manifest's name, version,
    hash and data files' hashes) or a Hub release (the same, with the tag and commit read), and
    which published copy it is (`source_copy`)."""
    from ..sources import fetch_release, hub_spec

    path = Path(spec).expanduser()
    if path.exists():
        record: dict = {"given": spec, "path": str(path.resolve())}
        if path.is_file():
            return {**record, "sha256": file_sha256(path), "source_copy": source_copy([path], kind)}
        if (path / "manifest.json").is_file():
            return {**record, **release_record(path, kind)}
        data = path / "data" if (path / "data").is_dir() else path
        files = sorted(f for f in data.rglob("*") if f.is_file())
        return {
            **record,
            "files": {f.relative_to(path).as_posix(): file_sha256(f) for f in files},
            "source_copy": source_copy([path], kind),
        }
    hub = hub_spec(spec)
    if hub is None:
        return {"given": spec, "source_copy": "unknown"}
    folder, revision = fetch_release(*hub)  # in the local Hub cache already: the evaluator fetched it
    commit = folder.name if folder.parent.name == "snapshots" else None
    return {"given": spec, "repo": hub[0], "revision": revision, "commit": commit, **release_record(folder, kind)}


def release_manifest(spec: str) -> dict | None:
    """The manifest of the release `spec` names (a folder, or ORG/NAME@REV fetched into the local
    Hub cache), None for anything else."""
    import json

    from ..sources import fetch_release, hub_spec

    path = Path(spec).expanduser()
    if not path.exists():
        hub = hub_spec(spec)
        if hub is None:
            return None
        path = fetch_release(*hub)[0]
    try:
        manifest = json.loads((path / "manifest.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return manifest if isinstance(manifest, dict) else None


def source_copy(paths: list[Path], kind: str | None) -> str:
    from ..sources.known import source_copy as which

    return which(paths, kind)


def release_record(folder: Path, kind: str | None = None) -> dict:
    """A release's name, version, manifest hash and its data files' hashes (as the manifest,
    checked before scoring, lists them); which published copy its data files are (a release built
    with `--original --layout original` is the published rows) and, for a renewal, which copy the
    renewal imported (its manifest's [origin] copy)."""
    import json

    raw = (folder / "manifest.json").read_bytes()
    manifest = json.loads(raw.decode("utf-8"))  # checked when the release was resolved
    files = manifest.get("files") or {}
    data = (
        {name: digest for name, digest in files.items() if name.startswith("data/")} if isinstance(files, dict) else {}
    )
    config = manifest.get("config") if isinstance(manifest.get("config"), dict) else {}
    origin = config.get("origin") if isinstance(config.get("origin"), dict) else {}
    from ..sources.known import TEXT_DATA

    texts = [folder / name for name in sorted(data) if name.lower().endswith(TEXT_DATA) and (folder / name).is_file()]
    return {
        "release": {
            "name": manifest.get("name"),
            "version": manifest.get("version"),
            "manifest_sha256": hashlib.sha256(raw).hexdigest(),
        },
        "files": data,
        "source_copy": source_copy(texts, kind or manifest.get("kind")),
        "kind_code": manifest.get("kind_code"),  # the code its evaluate.py runs (None: built before it was recorded)
        **({"origin_copy": origin["published_copy"]} if origin.get("published_copy") else {}),
    }


def model_record(name: str, root: Path | None, runtime) -> dict:
    """A model as given, where it was read from (a folder's absolute path, else the Hub name) and
    the revision of its weights (a commit, or a hash of a local folder's files)."""
    folder = Path(name).expanduser()
    if not folder.is_absolute() and root is not None and not folder.exists():
        folder = Path(root) / folder
    where = str(folder.resolve()) if folder.is_dir() else name
    return {"given": name, "resolved": where, "revision": getattr(runtime, "revision", None)}


def _plain(value):
    """An option's value as JSON holds it (paths as text)."""
    return str(value) if isinstance(value, Path) else value
