"""A local server speaking the part of the Hugging Face Hub HTTP API that `huggingface_hub`
and `datasets` use to create a dataset repo, commit files, tag, and read them back by
revision. Real HTTP on 127.0.0.1; the clients are pointed at it with HF_ENDPOINT and are
not patched. Repositories live in memory as a list of commits per repo.

Start it with `HubServer(tokens={"hf_x"}).start()`; `.url` is the endpoint; `.stop()`.

Where the client branches on the Hub's answer, this server answers as the Hub does:
- errors carry `X-Error-Code` (RepoNotFound, RevisionNotFound, EntryNotFound), so the client
  raises its specific errors and workbench's messages for them run;
- preupload answers `lfs` for files the repo's .gitattributes sends to LFS (*.parquet) and for
  files over 10 MB, and the client then uses the LFS batch API (basic transfer: PUT, then verify);
  tests set HF_HUB_DISABLE_XET=1, as the Xet protocol is not served here;
- preupload returns the remote file's oid (git SHA-1 for regular files, SHA-256 for LFS), so the
  client skips files that did not change;
- a commit whose README.md has YAML `configs` pointing at data files that do not exist in the
  commit is refused (400), as the Hub refuses invalid dataset metadata;
- branches can be created and deleted (publishing an older version tags a side branch).

Not modelled: Xet storage, multipart LFS uploads, pull requests, gated repos, rate limits,
organisations and permissions beyond "a known token may write", resolve redirects to a CDN,
the datasets-server (viewer) and its Parquet conversion, repo settings (visibility changes),
and commit squashing or super-squash.
"""

from __future__ import annotations

import base64
import hashlib
import json
import re
import threading
import time
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qs, unquote, urlparse


@dataclass
class Commit:
    oid: str
    parent: str | None
    message: str
    files: dict[str, bytes]
    date: str


@dataclass
class Repo:
    repo_id: str
    repo_type: str
    private: bool
    commits: dict[str, Commit] = field(default_factory=dict)
    branches: dict[str, str] = field(default_factory=dict)
    tags: dict[str, str] = field(default_factory=dict)

    def resolve(self, revision: str) -> Commit | None:
        revision = unquote(revision)
        oid = self.branches.get(revision) or self.tags.get(revision) or (revision if revision in self.commits else None)
        return self.commits.get(oid) if oid else None


def _now() -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%S.000Z", time.gmtime())


class HubState:
    def __init__(self, tokens: set[str]):
        self.tokens = tokens
        self.repos: dict[tuple[str, str], Repo] = {}
        self.lock = threading.Lock()
        self.requests: list[str] = []
        self.lfs_blobs: dict[str, bytes] = {}  # sha256 -> content, as LFS storage holds them

    def new_repo(self, repo_id: str, repo_type: str, private: bool) -> Repo:
        repo = Repo(repo_id, repo_type, private)
        files = {".gitattributes": b"*.parquet filter=lfs diff=lfs merge=lfs -text\n"}
        first = Commit(
            hashlib.sha1(f"{repo_id}{time.time()}".encode()).hexdigest(), None, "initial commit", files, _now()
        )
        repo.commits[first.oid] = first
        repo.branches["main"] = first.oid
        self.repos[(repo_type, repo_id)] = repo
        return repo


def _blob_oid(data: bytes) -> str:
    return hashlib.sha1(b"blob %d\0" % len(data) + data).hexdigest()


LFS_THRESHOLD = 10 * 1024 * 1024


def _lfs_patterns(files: dict[str, bytes]) -> list[str]:
    """The patterns .gitattributes sends to LFS (`PATTERN filter=lfs ...`)."""
    text = files.get(".gitattributes", b"").decode("utf-8", "replace")
    return [line.split()[0] for line in text.splitlines() if "filter=lfs" in line and line.split()]


def _is_lfs(path: str, size: int, patterns: list[str]) -> bool:
    from fnmatch import fnmatch

    name = path.rsplit("/", 1)[-1]
    return size > LFS_THRESHOLD or any(fnmatch(path, p) or fnmatch(name, p) for p in patterns)


def _config_problems(files: dict[str, bytes]) -> list[str]:
    """What the Hub would refuse in README.md's YAML `configs`: data_files paths matching no file."""
    import yaml
    from fnmatch import fnmatch

    text = files.get("README.md", b"").decode("utf-8", "replace")
    if not text.startswith("---") or text.count("---") < 2:
        return []
    try:
        meta = yaml.safe_load(text.split("---", 2)[1]) or {}
    except yaml.YAMLError as exc:
        return [f"invalid YAML: {exc}"]
    problems = []
    for config in meta.get("configs") or []:
        data_files = config.get("data_files") if isinstance(config, dict) else None
        entries = data_files if isinstance(data_files, list) else [data_files] if data_files else []
        for entry in entries:
            paths = entry.get("path") if isinstance(entry, dict) else entry
            for pattern in paths if isinstance(paths, list) else [paths]:
                if isinstance(pattern, str) and not any(fnmatch(f, pattern) for f in files):
                    problems.append(
                        f"config {config.get('config_name')!r}: no file matches data_files path {pattern!r}"
                    )
    return problems


class Handler(BaseHTTPRequestHandler):
    server_version = "FakeHub/1.0"
    state: HubState  # set by HubServer

    def log_message(self, fmt, *args):  # keep test output clean
        pass

    # -- helpers -------------------------------------------------------------------------------
    def _send(self, status: int, body=None, headers: dict | None = None, raw: bytes | None = None) -> None:
        data = raw if raw is not None else (b"" if body is None else json.dumps(body).encode())
        self.send_response(status)
        if raw is None:
            self.send_header("Content-Type", "application/json")
        for k, v in (headers or {}).items():
            self.send_header(k, v)
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(data)

    def _error(self, status: int, message: str, code: str | None = None) -> None:
        headers = {"X-Error-Message": message, **({"X-Error-Code": code} if code else {})}
        self._send(status, {"error": message}, headers)

    def _token(self) -> str | None:
        auth = self.headers.get("Authorization", "")
        return auth[7:] if auth.startswith("Bearer ") else None

    def _authorised(self, write: bool, repo: Repo | None = None) -> bool:
        token = self._token()
        if token is not None and token not in self.state.tokens:
            self._error(401, "Invalid credentials in Authorization header")
            return False
        if (write or (repo is not None and repo.private)) and token is None:
            self._error(401, "Authorization header is required")
            return False
        return True

    def _body(self) -> bytes:
        length = int(self.headers.get("Content-Length") or 0)
        return self.rfile.read(length) if length else b""

    def _target(self, kind: str, repo_id: str, revision: str, write: bool) -> tuple[Repo | None, Commit | None]:
        """The repo and the commit a revision names, after the access check; (.., None) after an error reply."""
        repo = self._repo(kind, repo_id)
        if repo is None or not self._authorised(write=write, repo=repo):
            return repo, None
        commit = repo.resolve(revision)
        if commit is None:
            self._error(404, f"Revision Not Found: {revision}", "RevisionNotFound")
        return repo, commit

    def _repo(self, kind: str, repo_id: str) -> Repo | None:
        repo = self.state.repos.get((kind.rstrip("s"), repo_id))
        if repo is None:
            self._error(404, "Repository not found", "RepoNotFound")
        return repo

    # -- routing -------------------------------------------------------------------------------
    def do_HEAD(self):
        self._route()

    def do_GET(self):
        self._route()

    def do_POST(self):
        self._route()

    def do_PUT(self):
        self._route()

    def do_DELETE(self):
        self._route()

    def _route(self) -> None:
        url = urlparse(self.path)
        path = url.path
        self.state.requests.append(f"{self.command} {path}")
        query = parse_qs(url.query)
        with self.state.lock:
            m = re.fullmatch(
                r"/api/(models|datasets|spaces)/([^/]+/[^/]+)/(preupload|commit|tag|tree|paths-info|revision)/([^/]+)(/.*)?",
                path,
            )
            if m:
                kind, repo_id, action, revision, rest = m.groups()
                return getattr(self, "_" + action.replace("-", "_"))(
                    kind, repo_id, unquote(revision), unquote(rest or ""), query
                )
            m = re.fullmatch(r"/api/(models|datasets|spaces)/([^/]+/[^/]+)/branch/(.+)", path)
            if m:
                return self._branch(m.group(1), m.group(2), unquote(m.group(3)))
            m = re.fullmatch(r"/(datasets/|spaces/)?([^/]+/[^/]+)\.git/info/lfs/objects/batch", path)
            if m:
                return self._lfs_batch((m.group(1) or "models/").rstrip("/"), m.group(2))
            m = re.fullmatch(r"/lfs-(upload|verify)/([0-9a-f]{64})", path)
            if m:
                return self._lfs_upload(m.group(2)) if m.group(1) == "upload" else self._lfs_verify(m.group(2))
            m = re.fullmatch(r"/api/(models|datasets|spaces)/([^/]+/[^/]+)/refs", path)
            if m:
                return self._refs(*m.groups())
            m = re.fullmatch(r"/api/(models|datasets|spaces)/([^/]+/[^/]+)", path)
            if m:
                return self._revision(m.group(1), m.group(2), "main", "", query)
            m = re.fullmatch(r"/(datasets/|spaces/)?([^/]+/[^/]+)/resolve/([^/]+)/(.+)", path)
            if m:
                kind = (m.group(1) or "models/").rstrip("/")
                return self._resolve(kind, m.group(2), unquote(m.group(3)), unquote(m.group(4)))
            if path == "/api/repos/create" and self.command == "POST":
                return self._create()
            if path == "/api/validate-yaml" and self.command == "POST":
                return self._validate_yaml()
            if path == "/api/whoami-v2":
                if not self._authorised(write=True):
                    return
                return self._send(200, {"type": "user", "name": "tester", "auth": {"accessToken": {"role": "write"}}})
        self._error(404, f"not served by this test hub: {self.command} {path}")

    # -- endpoints -----------------------------------------------------------------------------
    def _create(self):
        if not self._authorised(write=True):
            return
        body = json.loads(self._body() or b"{}")
        repo_id = f"{body.get('organization') or 'tester'}/{body['name']}"
        kind = body.get("type", "model")
        base = self.headers.get("Host")
        url = f"http://{base}/{'datasets/' if kind == 'dataset' else ''}{repo_id}"
        if (kind, repo_id) in self.state.repos:
            return self._send(
                409,
                {"error": "You already created this repo", "url": url},
                {"X-Error-Message": "You already created this repo"},
            )
        self.state.new_repo(repo_id, kind, bool(body.get("private")))
        self._send(200, {"url": url, "name": repo_id})

    def _validate_yaml(self):
        """The Hub checks a card's YAML header before a commit that changes README.md."""
        import yaml

        body = json.loads(self._body() or b"{}")
        content = body.get("content", "")
        header = content.split("---", 2)[1] if content.startswith("---") and content.count("---") >= 2 else ""
        try:
            meta = yaml.safe_load(header) or {}
        except yaml.YAMLError as exc:
            return self._send(400, {"errors": [{"message": f"invalid YAML: {exc}"}], "warnings": []})
        if not isinstance(meta, dict):
            return self._send(400, {"errors": [{"message": "metadata must be a mapping"}], "warnings": []})
        self._send(200, {"errors": [], "warnings": []})

    def _refs(self, kind, repo_id):
        repo = self._repo(kind, repo_id)
        if repo is None or not self._authorised(write=False, repo=repo):
            return
        self._send(
            200,
            {
                "branches": [
                    {"name": n, "ref": f"refs/heads/{n}", "targetCommit": o} for n, o in repo.branches.items()
                ],
                "tags": [{"name": n, "ref": f"refs/tags/{n}", "targetCommit": o} for n, o in repo.tags.items()],
                "converts": [],
            },
        )

    def _preupload(self, kind, repo_id, revision, rest, query):
        repo = self._repo(kind, repo_id)
        if repo is None or not self._authorised(write=True, repo=repo):
            return
        body = json.loads(self._body() or b"{}")
        head = repo.resolve(revision)
        current = head.files if head else {}
        patterns = _lfs_patterns(current)
        answer = []
        for f in body.get("files", []):
            lfs = _is_lfs(f["path"], int(f.get("size", 0)), patterns)
            remote = current.get(f["path"])
            oid = None if remote is None else hashlib.sha256(remote).hexdigest() if lfs else _blob_oid(remote)
            answer.append(
                {"path": f["path"], "uploadMode": "lfs" if lfs else "regular", "shouldIgnore": False, "oid": oid}
            )
        self._send(200, {"files": answer, "commitOid": head.oid if head else None})

    def _lfs_batch(self, kind, repo_id):
        repo = self._repo(kind, repo_id)
        if repo is None or not self._authorised(write=True, repo=repo):
            return
        body = json.loads(self._body() or b"{}")
        base = f"http://{self.headers.get('Host')}"
        objects = []
        for obj in body.get("objects", []):
            entry = {"oid": obj["oid"], "size": obj["size"], "authenticated": True}
            if obj["oid"] not in self.state.lfs_blobs:  # already stored: no actions, the client skips it
                entry["actions"] = {
                    "upload": {"href": f"{base}/lfs-upload/{obj['oid']}"},
                    "verify": {"href": f"{base}/lfs-verify/{obj['oid']}"},
                }
            objects.append(entry)
        self._send(200, {"transfer": "basic", "objects": objects, "hash_algo": "sha256"})

    def _lfs_upload(self, oid):
        data = self._body()
        if hashlib.sha256(data).hexdigest() != oid:
            return self._error(400, "the uploaded content does not match its sha256")
        self.state.lfs_blobs[oid] = data
        self._send(200, raw=b"")

    def _lfs_verify(self, oid):
        body = json.loads(self._body() or b"{}")
        data = self.state.lfs_blobs.get(oid)
        if data is None or body.get("size") != len(data):
            return self._error(404, "object not stored")
        self._send(200, {"success": True})

    def _branch(self, kind, repo_id, branch):
        repo = self._repo(kind, repo_id)
        if repo is None or not self._authorised(write=True, repo=repo):
            return
        if self.command == "DELETE":
            if branch == "main" or branch not in repo.branches:
                return self._error(403 if branch == "main" else 404, f"cannot delete branch {branch}")
            del repo.branches[branch]
            return self._send(200, {})
        if branch in repo.branches:
            return self._error(409, f"Branch {branch} already exists")
        start = json.loads(self._body() or b"{}").get("startingPoint") or "main"
        commit = repo.resolve(start)
        if commit is None:
            return self._error(404, f"Revision Not Found: {start}", "RevisionNotFound")
        repo.branches[branch] = commit.oid
        self._send(200, {})

    def _commit(self, kind, repo_id, revision, rest, query):
        repo = self._repo(kind, repo_id)
        if repo is None or not self._authorised(write=True, repo=repo):
            return
        if revision not in repo.branches:
            return self._error(404, f"Revision Not Found: {revision}", "RevisionNotFound")
        head = repo.commits[repo.branches[revision]]
        files = dict(head.files)
        message = ""
        for line in self._body().splitlines():
            if not line.strip():
                continue
            item = json.loads(line)
            key, value = item["key"], item["value"]
            if key == "header":
                message = value.get("summary", "")
                parent = value.get("parentCommit")
                if parent and parent != head.oid:
                    return self._error(412, "parent commit is not the head")
            elif key == "file":
                files[value["path"]] = base64.b64decode(value["content"])
            elif key == "lfsFile":
                data = self.state.lfs_blobs.get(value["oid"])
                if data is None:
                    return self._error(400, f"LFS object {value['oid']} of {value['path']} was never uploaded")
                files[value["path"]] = data
            elif key == "deletedFile":
                files.pop(value["path"], None)
            elif key == "deletedFolder":
                prefix = value["path"].rstrip("/") + "/"
                files = {p: d for p, d in files.items() if not p.startswith(prefix)}
            else:
                return self._error(400, f"unsupported commit operation {key}")
        problems = _config_problems(files)
        if problems:
            return self._error(400, "Invalid metadata in README.md: " + "; ".join(problems))
        oid = hashlib.sha1(
            json.dumps([head.oid, message, sorted((p, _blob_oid(d)) for p, d in files.items())]).encode()
            + str(time.time_ns()).encode()
        ).hexdigest()
        repo.commits[oid] = Commit(oid, head.oid, message, files, _now())
        repo.branches[revision] = oid
        base = f"http://{self.headers.get('Host')}"
        prefix = "datasets/" if repo.repo_type == "dataset" else ""
        self._send(
            200,
            {
                "success": True,
                "commitOid": oid,
                "commitUrl": f"{base}/{prefix}{repo_id}/commit/{oid}",
                "pullRequestUrl": None,
                "hookOutput": None,
            },
        )

    def _tag(self, kind, repo_id, revision, rest, query):
        repo, commit = self._target(kind, repo_id, revision, write=True)
        if commit is None:
            return
        body = json.loads(self._body() or b"{}")
        tag = body["tag"]
        if tag in repo.tags:
            return self._error(409, f"Tag {tag} already exists")
        repo.tags[tag] = commit.oid
        self._send(200, {"success": True})

    def _entries(self, commit: Commit, prefix: str, recursive: bool) -> list[dict]:
        prefix = prefix.strip("/")
        out, dirs = [], set()
        for p in sorted(commit.files):
            if prefix and not (p == prefix or p.startswith(prefix + "/")):
                continue
            rel = p[len(prefix) + 1 :] if prefix and p != prefix else p
            parts = rel.split("/")
            if not recursive and len(parts) > 1:
                d = (prefix + "/" if prefix else "") + parts[0]
                if d not in dirs:
                    dirs.add(d)
                    out.append({"type": "directory", "oid": _blob_oid(d.encode()), "size": 0, "path": d})
                continue
            if recursive:
                for i in range(1, len(parts)):
                    d = (prefix + "/" if prefix else "") + "/".join(parts[:i])
                    if d not in dirs:
                        dirs.add(d)
                        out.append({"type": "directory", "oid": _blob_oid(d.encode()), "size": 0, "path": d})
            data = commit.files[p]
            out.append(
                {
                    "type": "file",
                    "oid": _blob_oid(data),
                    "size": len(data),
                    "path": p,
                    "lastCommit": {"id": commit.oid, "title": commit.message, "date": commit.date},
                }
            )
        return out

    def _tree(self, kind, repo_id, revision, rest, query):
        repo, commit = self._target(kind, repo_id, revision, write=False)
        if commit is None:
            return
        recursive = query.get("recursive", ["false"])[0].lower() in ("1", "true")
        self._send(200, self._entries(commit, rest, recursive))

    def _paths_info(self, kind, repo_id, revision, rest, query):
        repo, commit = self._target(kind, repo_id, revision, write=False)
        if commit is None:
            return
        raw = self._body()
        ctype = self.headers.get("Content-Type", "")
        if "json" in ctype:
            paths = json.loads(raw or b"{}").get("paths", [])
        else:
            paths = parse_qs(raw.decode()).get("paths", [])
        out = []
        for p in paths:
            p = p.strip("/")
            if p in commit.files:
                data = commit.files[p]
                out.append({"type": "file", "oid": _blob_oid(data), "size": len(data), "path": p})
            elif any(f.startswith(p + "/") for f in commit.files):
                out.append({"type": "directory", "oid": _blob_oid(p.encode()), "size": 0, "path": p})
        self._send(200, out)

    def _revision(self, kind, repo_id, revision, rest, query):
        repo, commit = self._target(kind, repo_id, revision, write=False)
        if commit is None:
            return
        self._send(
            200,
            {
                "_id": repo_id,
                "id": repo_id,
                "sha": commit.oid,
                "private": repo.private,
                "disabled": False,
                "gated": False,
                "downloads": 0,
                "likes": 0,
                "tags": [],
                "author": repo_id.split("/")[0],
                "lastModified": commit.date,
                "createdAt": commit.date,
                "siblings": [{"rfilename": p, "size": len(d)} for p, d in sorted(commit.files.items())],
            },
        )

    def _resolve(self, kind, repo_id, revision, path):
        repo, commit = self._target(kind, repo_id, revision, write=False)
        if commit is None:
            return
        if path not in commit.files:
            return self._send(
                404,
                {"error": "Entry not found"},
                {"X-Error-Code": "EntryNotFound", "X-Error-Message": "Entry not found", "X-Repo-Commit": commit.oid},
            )
        data = commit.files[path]
        headers = {
            "X-Repo-Commit": commit.oid,
            "ETag": f'"{_blob_oid(data)}"',
            "Content-Type": "application/octet-stream",
            "Accept-Ranges": "none",
        }
        self._send(200, headers=headers, raw=data)


class HubServer:
    def __init__(self, tokens: set[str] | None = None, host: str = "127.0.0.1"):
        self.state = HubState(set(tokens or ()))
        handler = type("BoundHandler", (Handler,), {"state": self.state})
        self.httpd = ThreadingHTTPServer((host, 0), handler)
        self.httpd.daemon_threads = True
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)

    @property
    def url(self) -> str:
        host, port = self.httpd.server_address[:2]
        return f"http://{host}:{port}"

    def start(self) -> "HubServer":
        self.thread.start()
        return self

    def stop(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()
        self.thread.join(timeout=10)
