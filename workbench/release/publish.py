"""Publishing a built release to the Hugging Face Hub, and pulling one back.

`publish` uploads exports/<name>/<version>/ to a dataset repo in one commit and tags it
vX.Y.Z: exactly the files its manifest lists (checked against their sha256) and manifest.json;
a folder holding anything else, or a link, is refused before anything is sent. A version that
is already tagged is refused before anything is uploaded: a release is never overwritten. The
token comes from HF_TOKEN or the Hub login (huggingface_hub finds either); it is never printed,
logged or written anywhere by this module.
"""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

from ..core.config import Config
from ..core.errors import InputError, WorkbenchError, display_path
from ..core.release_files import MANIFEST, shown
from ..sources import hub_endpoint, verify_release
from .versions import VERSION, export_dir, parse_version


class HubError(WorkbenchError):
    """The Hub refused or could not be reached."""


def _hub_call(what: str, fn, *args, **kwargs):
    """Run a huggingface_hub call; turn its failures into messages (without the token)."""
    from huggingface_hub.errors import HfHubHTTPError, RepositoryNotFoundError, RevisionNotFoundError

    try:
        return fn(*args, **kwargs)
    except RevisionNotFoundError:
        raise HubError(f"{what}: revision not found on the Hub") from None
    except RepositoryNotFoundError:
        raise HubError(f"{what}: repository not found (or no access with this token)") from None
    except HfHubHTTPError as exc:
        status = exc.response.status_code if exc.response is not None else "?"
        if status in (401, 403):
            raise HubError(
                f"{what}: the Hub refused the token ({status}); set HF_TOKEN or run `hf auth login`"
            ) from None
        said = getattr(exc, "server_message", None)
        raise HubError(f"{what}: the Hub answered {status}" + (f": {said}" if said else "")) from None
    except (OSError, ConnectionError) as exc:
        raise HubError(f"{what}: cannot reach the Hub at {hub_endpoint()} ({type(exc).__name__})") from None
    except Exception as exc:  # httpx transport errors and the like
        if "connect" in type(exc).__name__.lower() or "timeout" in type(exc).__name__.lower():
            raise HubError(f"{what}: cannot reach the Hub at {hub_endpoint()} ({type(exc).__name__})") from None
        raise


def _token() -> str:
    """HF_TOKEN or the `hf auth login` token; none is an error before any request is made."""
    from huggingface_hub import get_token

    token = get_token()
    if not token:
        raise HubError("no token: set HF_TOKEN or run `hf auth login` (nothing was sent to the Hub)")
    return token


def _release_tags(refs) -> list[str]:
    return [t.name[1:] for t in refs.tags if t.name.startswith("v") and VERSION.fullmatch(t.name[1:])]


def _remote_state(api, repo: str) -> dict | None:
    """What `main` holds now: its files and the files the release published there wrote (from
    its manifest); None when the repo does not exist yet."""
    from huggingface_hub.errors import RepositoryNotFoundError

    try:
        refs = api.list_repo_refs(repo, repo_type="dataset")
    except RepositoryNotFoundError:
        return None
    files = set(api.list_repo_files(repo, repo_type="dataset", revision="main"))
    written: set[str] = set()
    if "manifest.json" in files:
        path = api.hf_hub_download(repo, "manifest.json", repo_type="dataset", revision="main")
        try:
            written = set(json.loads(Path(path).read_text(encoding="utf-8")).get("files", {})) | {"manifest.json"}
        except (ValueError, AttributeError):
            written = set()
    private = bool(getattr(api.repo_info(repo, repo_type="dataset"), "private", False))
    return {
        "tags": [t.name for t in refs.tags],
        "versions": _release_tags(refs),
        "files": files,
        "written": written,
        "private": private,
    }


def _published_files(folder: Path, manifest: dict) -> list[str]:
    """What a publish uploads: exactly the files the manifest lists, and manifest.json (the one
    file a build writes that its manifest cannot list). Anything else in the folder (a stray
    `.env`, an editor's backup) and any link, listed or not, is refused by name before anything
    is sent: the folder is not the release its manifest describes, and a link could upload a
    file from outside it. The listed files were checked against their sha256 (verify_release)."""
    listed = set(manifest.get("files", {})) | {MANIFEST}
    strays: list[str] = []
    for root, dirs, files in os.walk(folder):  # links to folders are not followed, only named
        here = Path(root)
        for name in sorted(dirs + files):
            path = here / name
            shown_name = shown(path.relative_to(folder).as_posix())
            if path.is_symlink():
                strays.append(f"{shown_name} (a symbolic link)")
            elif name in files and path.relative_to(folder).as_posix() not in listed:
                strays.append(shown_name)
    if strays:
        raise InputError(
            f"{display_path(folder)} holds what its manifest.json does not list: {', '.join(strays)}; "
            "nothing was uploaded: remove them (or rebuild the release with `workbench build --force`)"
        )
    return sorted(listed)


def publish(config: Config, version: str, repo: str, *, private: bool = False, dry_run: bool = False) -> dict:
    """Upload a built release and tag it, without destroying or rewinding anything.

    Only the release's files are added; files an earlier release wrote and this one lacks are
    deleted (and listed); files nobody's release wrote stay where they are (and are listed).
    A version older than the newest published one is tagged on a side branch: `main` keeps
    the newest release. The dry run makes the same read-only checks (token, tag) and says all
    of this without changing anything."""
    parse_version(version)
    folder = export_dir(config, version)
    if not folder.is_dir():
        raise InputError(
            f"no build of {config.project.name} {version} in {folder}: run `workbench build --version {version}` first"
        )
    manifest = verify_release(folder)
    local = _published_files(folder, manifest)
    if not manifest.get("license"):
        raise InputError(
            f'this build of {version} states no licence (its card says "not stated"), so it is not '
            f"published: set [project] license in {config.shown_source} (a Hub licence id such as "
            f"cc-by-4.0 or mit), then run `workbench build --version {version} --force`"
        )
    if manifest.get("repo") != repo:
        pinned = manifest.get("repo") or "no repo"
        raise InputError(
            f"this build's dataset card and evaluator pin {pinned}, not {repo}: set [project] repo = "
            f'"{repo}" in workbench.toml and run `workbench build --version {version} --force`'
        )
    from huggingface_hub import HfApi

    token = _token()
    api = HfApi(endpoint=hub_endpoint(), token=token)
    _hub_call("check the token", api.whoami)
    remote = _hub_call(f"read {repo}", _remote_state, api, repo)
    tag = f"v{version}"
    if remote is not None and tag in remote["tags"]:
        raise HubError(f"{repo} already has a release {tag}; releases are never overwritten: bump the version")
    newest = max(remote["versions"], key=parse_version) if remote and remote["versions"] else None
    older = newest is not None and parse_version(version) < parse_version(newest)
    present, written = (remote["files"], remote["written"]) if remote else (set(), set())
    notes = []
    if remote is not None and private and not remote["private"]:
        notes.append(
            f"{repo} already exists and is public: --private does not change it (change it in the repo's "
            "settings on the Hub)"
        )
    if older:
        notes.append(
            f"{version} is older than the newest release v{newest}: it is tagged on its own commit and main "
            f"keeps v{newest}"
        )
    plan = {
        "repo": repo,
        "tag": tag,
        "endpoint": hub_endpoint(),
        "private": private,
        "exists": remote is not None,
        "files": [{"path": f, "bytes": (folder / f).stat().st_size} for f in local],
        "delete": sorted((written & present) - set(local)),
        "keep": sorted(present - set(local) - written - {".gitattributes"}),
        "branch": f"release-{tag}" if older else "main",
        "notes": notes,
    }
    if dry_run:
        return {**plan, "dry_run": True}

    from huggingface_hub import CommitOperationAdd, CommitOperationDelete

    if remote is None:
        _hub_call(f"create {repo}", api.create_repo, repo, repo_type="dataset", private=private)
    if older:
        _hub_call(f"branch {repo}", api.create_branch, repo, branch=plan["branch"], repo_type="dataset")
    operations = [CommitOperationAdd(path_in_repo=f, path_or_fileobj=str(folder / f)) for f in local]
    operations += [CommitOperationDelete(path_in_repo=f) for f in plan["delete"]]
    commit = _hub_call(
        f"upload to {repo}",
        api.create_commit,
        repo,
        operations,
        repo_type="dataset",
        revision=plan["branch"],
        commit_message=f"Release {tag}",
    )
    _hub_call(
        f"tag {repo}",
        api.create_tag,
        repo,
        tag=tag,
        revision=commit.oid,
        repo_type="dataset",
        tag_message=f"{config.project.name} {tag}",
    )
    if older:  # the tag keeps the commit; the side branch is not needed any more
        _hub_call(f"tidy {repo}", api.delete_branch, repo, branch=plan["branch"], repo_type="dataset")
    return {**plan, "dry_run": False, "commit": commit.oid}


def pull(spec: str, out: Path | None, config: Config) -> dict:
    import re

    m = re.fullmatch(r"([\w.-]+/[\w.-]+)@(v?[\w.-]+)", spec)
    if not m:
        raise InputError(f"{spec!r} is not ORG/NAME@vX.Y.Z")
    repo, revision = m.groups()
    from huggingface_hub import snapshot_download

    if VERSION.fullmatch(revision):
        revision = f"v{revision}"  # releases are tagged vX.Y.Z
    version = revision[1:] if revision.startswith("v") else revision
    target = out or (config.path("exports") / repo.split("/")[1] / version)
    if target.exists() and any(target.iterdir()):
        raise InputError(f"{target} is not empty; pass --out to another folder")
    staging = Path(str(target) + ".partial")
    if staging.exists():
        shutil.rmtree(staging)
    _hub_call(
        f"download {spec}", snapshot_download, repo, repo_type="dataset", revision=revision, local_dir=str(staging)
    )
    shutil.rmtree(staging / ".cache", ignore_errors=True)
    if (staging / "manifest.json").is_file():
        verify_release(staging)
    target.parent.mkdir(parents=True, exist_ok=True)
    if target.exists():
        target.rmdir()
    staging.rename(target)
    return {
        "repo": repo,
        "revision": revision,
        "path": target,
        "files": sum(1 for p in target.rglob("*") if p.is_file()),
    }
