"""Where an evaluator's, pull's or changes' input comes from: one resolver for every kind.

A source is written as one of
  - a local file (a benchmark's public file, templates),
  - a local folder: a release folder (with `manifest.json`, checked file by file) or any other,
  - `ORG/NAME@REV` (or `ORG/NAME`): a release on the Hugging Face Hub, downloaded into the Hub's
    own cache at that revision (`1.0.0` is read as the tag `v1.0.0`) and checked like a folder.
`resolve()` says which, with the folder, the manifest and the revision; nothing here knows a
benchmark kind.
"""

from __future__ import annotations

import json
import os
import re
from dataclasses import dataclass
from pathlib import Path

from ..core.errors import InputError, display_path
from ..core.ids import file_sha256
from ..core.release_files import MANIFEST, refusal, shown, unsafe_names
from .copies import check_data

HUB_SPEC = re.compile(r"^(?P<repo>[\w.-]+/[\w.-]+)(?:@(?P<rev>[\w./-]+))?$")
# A release's version: semantic versioning, whole (fullmatch: "1.0.0\n" is not a version).
VERSION = re.compile(r"^(0|[1-9]\d*)\.(0|[1-9]\d*)\.(0|[1-9]\d*)$")


@dataclass
class Source:
    """A resolved source. `path` is where its files are (None: nothing local, nothing fetched)."""

    given: str  # as the user wrote it
    path: Path | None
    repo: str | None = None  # Hub repository, when it came from the Hub
    revision: str | None = None  # the revision it was read at
    manifest: dict | None = None  # the release manifest, when there is one (checked)

    @property
    def is_release(self) -> bool:
        return self.manifest is not None

    @property
    def label(self) -> str:
        if self.repo:
            return f"{self.repo}@{self.revision}" if self.revision else self.repo
        return self.given


def hub_spec(spec: str) -> tuple[str, str | None] | None:
    """(repo, revision) of ORG/NAME[@REV], or None when `spec` is not written that way."""
    m = HUB_SPEC.match(spec)
    return (m.group("repo"), m.group("rev")) if m else None


def resolve(spec: str, *, fetch: bool = True, verify: bool = True) -> Source:
    """Where `spec` is. An existing local path wins over a Hub name; a Hub name with a revision
    is fetched (when `fetch`; without a revision, `main`); a folder with a manifest is checked against it (when `verify`)."""
    path = Path(spec).expanduser()
    if path.exists():
        manifest = read_manifest(path, verify) if path.is_dir() else None
        return Source(spec, path, manifest=manifest)
    hub = hub_spec(spec)
    if hub and fetch:
        folder, revision = fetch_release(*hub)
        return Source(spec, folder, hub[0], revision, read_manifest(folder, verify=False))
    return Source(spec, None, *(hub or (None, None)))


def read_manifest(folder: Path, verify: bool = True) -> dict | None:
    """A release folder's manifest (checked against its files when `verify`), or None."""
    if not (folder / "manifest.json").is_file():
        return None
    if verify:
        return verify_release(folder)
    try:
        data = json.loads((folder / "manifest.json").read_text(encoding="utf-8"))
    except (ValueError, UnicodeDecodeError):
        return None
    return data if isinstance(data, dict) else None


def hub_endpoint() -> str:
    from huggingface_hub import constants

    return os.environ.get("HF_ENDPOINT") or constants.ENDPOINT


def verify_release(folder: Path) -> dict:
    """The build's manifest, after checking that every name it lists is a file inside the
    folder (core/release_files: no `..`, no absolute path, no link), every file against its
    sha256, and the data files as data (copies.check_data). The names are checked first, so
    nothing outside the release is ever opened."""
    manifest_path = folder / MANIFEST
    if not manifest_path.is_file():
        raise InputError(f"no build in {folder}: run `workbench build --version X.Y.Z` first")
    linked = unsafe_names(folder, [MANIFEST])
    if linked:
        raise InputError(_outside(folder, linked))
    try:
        manifest = json.loads(manifest_path.read_text(encoding="utf-8"))
        files = dict(manifest.get("files", {}))
    except (ValueError, UnicodeDecodeError, AttributeError, TypeError):
        raise InputError(
            f"{display_path(manifest_path)} is not a release manifest (not a JSON object with `files`)"
        ) from None
    outside = unsafe_names(folder, files)
    if outside:
        raise InputError(_outside(folder, outside))
    bad = [
        name for name, digest in files.items() if not (folder / name).is_file() or file_sha256(folder / name) != digest
    ]
    if bad:
        raise InputError(
            f"{display_path(folder)}: {', '.join(map(shown, bad))} do(es) not match the release manifest (changed, cut "
            "short or missing); nothing was scored or uploaded: rebuild the release or download it again"
        )
    # Hashes updated with a file say nothing of its content: each Parquet must read, and a
    # table held twice (a CSV and a Parquet) must agree with itself (sources/copies).
    check_data(folder, files, files)
    return manifest


def _outside(folder: Path, problems: list[str]) -> str:
    # The manifest is named in its folder: display_path would resolve a linked manifest.json to its target.
    return (
        refusal(os.path.join(display_path(folder), MANIFEST), problems) + "; nothing was scored or uploaded: "
        "rebuild the release or download it again"
    )


def fetch_release(repo: str, revision: str | None) -> tuple[Path, str]:
    """A published release's folder in the local Hub cache, checked against its manifest, and the
    revision it was read at. What evaluators of every kind call for `ORG/NAME@REVISION`.

    A missing repository or revision is said as such (with the release tags there are), a
    version written without its `v` is read as the tag, and a network failure is told apart."""
    from huggingface_hub import snapshot_download
    from huggingface_hub.errors import (
        HfHubHTTPError,
        LocalEntryNotFoundError,
        OfflineModeIsEnabled,
        RepositoryNotFoundError,
        RevisionNotFoundError,
    )

    spec = f"{repo}@{revision}" if revision else repo
    candidates = [revision]
    if revision and VERSION.fullmatch(revision):
        candidates.insert(0, f"v{revision}")  # `1.0.0` means the release tag v1.0.0
    for candidate in candidates:
        try:
            folder = Path(snapshot_download(repo, repo_type="dataset", revision=candidate))
            break
        except RevisionNotFoundError:
            continue
        except RepositoryNotFoundError:
            raise InputError(
                f"dataset repository {repo} not found on the Hub at {hub_endpoint()} (or it is private and "
                "the token has no access)"
            ) from None
        except (OfflineModeIsEnabled, LocalEntryNotFoundError):
            from huggingface_hub import constants

            if constants.HF_HUB_OFFLINE:
                raise InputError(
                    f"cannot fetch {spec}: offline (HF_HUB_OFFLINE is set) and it is not in the local "
                    "Hub cache; unset HF_HUB_OFFLINE or pass a local release folder"
                ) from None
            raise InputError(
                f"cannot fetch {spec}: cannot reach the Hub at {hub_endpoint()}, and it is not in the local Hub cache"
            ) from None
        except HfHubHTTPError as exc:
            status = exc.response.status_code if exc.response is not None else "?"
            raise InputError(f"cannot fetch {spec}: the Hub answered {status}") from None
        except Exception as exc:  # noqa: BLE001 -- httpx/OS transport errors: the network, not the data
            raise InputError(
                f"cannot fetch {spec}: cannot reach the Hub at {hub_endpoint()} ({type(exc).__name__})"
            ) from None
    else:
        raise InputError(f"revision {revision} not found in {repo}" + _tags_hint(repo))
    if (folder / "manifest.json").is_file():
        verify_release(folder)
    return folder, candidate or "main"


def _tags_hint(repo: str) -> str:
    try:
        from huggingface_hub import HfApi

        tags = sorted(t.name for t in HfApi(endpoint=hub_endpoint()).list_repo_refs(repo, repo_type="dataset").tags)
    except Exception:  # noqa: BLE001 -- only a hint
        return ""
    return f"; its release tags: {', '.join(tags)}" if tags else "; it has no release tags yet"


def data_file(spec: str, kind: str, data_name: str, file_suffixes: tuple[str, ...] = ()) -> tuple[Path, str]:
    """The data file a kind scores, and how to call the source: `spec` is that file itself, a
    release folder of `kind` holding `data_name` (its manifest checked, its kind matched), or a
    Hub release ORG/NAME@REV of one (fetched). What every kind's reader does first."""
    path = Path(spec).expanduser()
    hub = hub_spec(spec)
    if not path.exists() and (not hub or spec.lower().endswith(file_suffixes or ("\0",))):
        raise InputError(f"{display_path(path)}: file not found (nor is it a Hub release ORG/NAME@REVISION)")
    found = resolve(spec)
    if found.path.is_file():
        return found.path, spec
    shown = display_path(found.path) if found.repo is None else found.label
    if found.manifest is None:
        raise InputError(f"{shown}: a folder without manifest.json; give the {data_name} file or a {kind} release")
    if found.manifest.get("kind") not in (None, kind):
        raise InputError(f"{shown}: manifest.json says kind {found.manifest.get('kind')!r}, not {kind!r}")
    if not (found.path / data_name).is_file():
        raise InputError(f"{shown}: not a {kind} release (no {data_name})")
    return found.path / data_name, spec
