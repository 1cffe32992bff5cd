"""What a kind's stages are made by, for their freshness: the kind's package, its version and a
hash of its code.

A stage's output depends on the code that computed it as much as on its inputs and settings:
upgrading a plugin whose parser changed must re-run its stages, not report "up to date" and
put the old rows into the next build. The code hashed is the kind's own package — for a built-in
kind its folder `workbench/kinds/<kind>/`, for a plugin the top-level package its entry point
names (a kind registered at run time: the module that defines its stages) — every file in it
but bytecode caches and hidden files; the rest of workbench is covered by workbench's version.

Hashing is cheap: the files are listed with their sizes and mtimes on each call (a few stat
calls: a kind's package is small), and read only when that list differs from the one hashed
before in this process.
"""

from __future__ import annotations

import hashlib
import importlib.util
from pathlib import Path
from typing import Any

BUILT_IN_PREFIX = "workbench.kinds."
_HASHED: dict[Path, tuple[tuple, str]] = {}  # root -> (its files' (name, size, mtime), their hash)


def module_of(kind: Any) -> str | None:
    """The module the kind comes from: its entry point's (`Kind.module`, set by the registry),
    else (registered at run time) the module defining its stages or its evaluator."""
    if kind.module:
        return kind.module
    for part in (kind.stages, kind.audit.stages if kind.audit else None):
        module = getattr(part, "__module__", None)
        if module:
            return module
    return kind.evaluator


def root_of(module: str) -> Path | None:
    """The file or folder holding the kind's code: `workbench.kinds.<kind>`'s folder for a
    built-in kind, else the module's top-level package (or module file); None when not on disk."""
    parts = module.split(".")
    name = ".".join(parts[:3]) if module.startswith(BUILT_IN_PREFIX) else parts[0]
    try:
        spec = importlib.util.find_spec(name)
    except (ImportError, ValueError):
        return None
    if spec is None:
        return None
    if spec.submodule_search_locations:
        return Path(next(iter(spec.submodule_search_locations)))
    return Path(spec.origin) if spec.origin and Path(spec.origin).is_file() else None


def _files(root: Path) -> list[Path]:
    if root.is_file():
        return [root]
    return sorted(
        p
        for p in root.rglob("*")
        if p.is_file()
        and p.suffix not in (".pyc", ".pyo")
        and not any(part.startswith(".") or part == "__pycache__" for part in p.relative_to(root).parts)
    )


def code_hash(root: Path) -> str:
    """sha256 of every file's path (relative to root) and content; recomputed only when a file's
    size or mtime changed since the last call in this process."""
    files = _files(root)
    folder = root.is_dir()
    index = tuple((p.relative_to(root).as_posix() if folder else p.name, *_stat(p)) for p in files)
    known = _HASHED.get(root)
    if known is not None and known[0] == index:
        return known[1]
    digest = hashlib.sha256()
    for path, (name, *_) in zip(files, index):
        data = path.read_bytes()
        digest.update(f"{name}\0{len(data)}\0".encode())
        digest.update(data)
    _HASHED[root] = (index, digest.hexdigest())
    return _HASHED[root][1]


def _stat(path: Path) -> tuple[int, int]:
    st = path.stat()
    return st.st_size, st.st_mtime_ns


def identity(kind: Any) -> dict[str, Any]:
    """{kind, package, version, code}: what a stage's freshness records of the kind that made it
    (`code` is "" when its source cannot be found: package and version still count)."""
    code = ""
    module = module_of(kind)
    root = root_of(module) if module else None
    if root is not None:
        try:
            code = code_hash(root)
        except OSError:  # a file vanished while listed (an upgrade in progress): hashed next time
            code = ""
    return {"kind": kind.name, "package": kind.package, "version": kind.version, "code": code}
