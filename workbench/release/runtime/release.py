"""The release a standalone evaluate.py scores: the files beside the script, or the revision it
is pinned to downloaded from the Hub, checked against manifest.json before anything is scored.

Copied into every release's evaluator/ (see `release/standalone`), so it imports only the
standard library and workbench's pure readers (huggingface_hub inside the download; pyarrow,
when importable, to check the data files as `workbench evaluate` does: sources/copies).
"""

from __future__ import annotations

import csv
import io
import sys
from pathlib import Path

from ...core.errors import display_path
from ...core.ids import file_sha256
from ...core.release_files import MANIFEST, refusal, shown, unsafe_names
from ...core.text import check_header, read_json, read_text
from ...sources.copies import check_data


class Refused(Exception):
    """Something the user can fix: reported in one line, exit code 2, nothing scored."""


SCORED_NOTHING = "nothing was scored: download the release again"


def locate_release(here: Path, dataset: str | None, from_hub: bool, unverified: bool = False) -> tuple[Path, dict]:
    """The folder holding the release files, and what the scores say about where it came from.

    The files beside the script (`here`) win, so a download of the repository works offline;
    only without them (or with --from-hub) is the pinned revision `dataset` (ORG/NAME@vX.Y.Z)
    fetched. Files beside the script without their manifest.json are scored only with
    --unverified (`origin["unverified"]`)."""
    if not from_hub and (here / "manifest.json").is_file():
        return here, {"source": str(here), "dataset_folder": str(here), "dataset_commit": None}
    loose = not from_hub and (here / "data").is_dir()
    if loose and unverified:
        return here, {"source": str(here), "dataset_folder": str(here), "dataset_commit": None, "unverified": True}
    hint = (
        (
            f"; {here} has data/ but no manifest.json, so its files cannot be checked: download the release again, "
            "or pass --unverified to score them as they are"
        )
        if loose
        else ""
    )
    if not dataset:
        raise Refused(
            "no manifest.json beside this script, and this release was never published to the Hub: "
            "run the script inside the release folder" + hint
        )
    repo, revision = dataset.split("@", 1)
    try:
        from huggingface_hub import snapshot_download
    except ImportError:
        raise Refused("downloading the release needs huggingface_hub (pip install huggingface_hub)" + hint) from None
    try:
        folder = Path(
            snapshot_download(repo, repo_type="dataset", revision=revision, allow_patterns=["manifest.json", "data/*"])
        )
    except Exception as exc:  # offline, missing repository or tag: all leave nothing to score
        raise Refused(f"cannot download {dataset} from the Hub ({type(exc).__name__}: {exc}){hint}") from None
    # The Hub cache keeps each revision in snapshots/<commit hash>.
    return folder, {
        "source": dataset,
        "repo": repo,
        "revision": revision,
        "dataset_folder": None,
        "dataset_commit": folder.name,
    }


def verified_manifest(folder: Path, kind: str, origin: dict | None = None) -> dict:
    """manifest.json, after checking that it is a `kind` release and every data file it lists
    against its sha256, after refusing any name it lists that is not a file inside the folder
    (absolute, `..`, a link), then the data files as data (sources/copies.check_data). For
    files scored --unverified: a stand-in naming the data files, checked as data too."""
    if origin and origin.get("unverified"):
        manifest = unverified_manifest(folder, kind)
        check_data(folder, manifest["files"], after=SCORED_NOTHING)
        return manifest
    linked = unsafe_names(folder, [MANIFEST])
    if linked:
        raise Refused(refusal(folder / MANIFEST, linked) + "; nothing was scored: download the release again")
    try:
        manifest = read_json(folder / MANIFEST, "release manifest")
        files = dict(manifest["files"])
    except (OSError, ValueError, KeyError, TypeError):
        raise Refused(
            f"{folder / 'manifest.json'} is missing or not a release manifest (a JSON object with `files`)"
        ) from None
    # Every name, not only the data files hashed below: a manifest naming anything outside the
    # folder is not this release's (as `workbench evaluate` refuses it, core/release_files).
    outside = unsafe_names(folder, files)
    if outside:
        raise Refused(refusal(folder / MANIFEST, outside) + "; nothing was scored: download the release again")
    if manifest.get("kind", kind) != kind:
        raise Refused(f"{folder} holds a {manifest['kind']!r} release; this evaluator scores {kind} releases")
    data = sorted(name for name in files if name.startswith("data/"))
    if not data:
        raise Refused(f"{folder / 'manifest.json'} lists no data files")
    bad = [name for name in data if not (folder / name).is_file() or file_sha256(folder / name) != files[name]]
    if bad:
        raise Refused(
            f"{folder}: {', '.join(map(shown, bad))} do(es) not match manifest.json (changed, cut short or missing); "
            "nothing was scored: download the release again"
        )
    # As `workbench evaluate` (sources/verify_release): each Parquet reads, and a CSV and the
    # Parquet of the same table agree. Only where pyarrow is importable: the card of most kinds
    # installs torch, transformers and numpy, and this script scores the CSV, hashed above.
    check_data(folder, data, files, after=SCORED_NOTHING)
    return manifest


def unverified_manifest(folder: Path, kind: str) -> dict:
    """--unverified: a stand-in for the manifest, naming the data files (the kind's reader then
    decodes the one it scores strictly, before any model loads, and names what is wrong)."""
    files = sorted(f for f in (folder / "data").rglob("*") if f.is_file())
    print(f"warning: {unverified_warning(folder)}", file=sys.stderr)
    return {"kind": kind, "files": {f.relative_to(folder).as_posix(): None for f in files}, "unverified": True}


def unverified_warning(folder: Path) -> str:
    return f"{folder}: scored --unverified: it has no manifest.json, so its files were not checked against a release"


def dataset_label(origin: dict) -> str:
    """What the scores call the data set, as `workbench evaluate` does: the Hub spec, or the
    folder relative to the working directory."""
    return origin["source"] if origin["dataset_folder"] is None else display_path(origin["dataset_folder"])


def read_csv_rows(path: Path) -> list[dict]:
    """A release's CSV (written by workbench: UTF-8, a header row), rows as dicts of text; a
    file that is not UTF-8 or not a CSV is named, with its line."""
    reader = csv.DictReader(io.StringIO(read_text(path, "data file"), newline=""))
    try:
        check_header(reader.fieldnames or [], display_path(path))  # DictReader keeps a repeated column's last cell
        return [row for row in reader if any((v or "").strip() for v in row.values())]
    except csv.Error as exc:
        raise Refused(f"{path}:{reader.line_num}: not a valid CSV ({exc})") from None
