"""Which paths a release manifest may name: files inside the release folder, reached without a link.

A manifest comes with the release, so it is input like any other: a name such as
`../../etc/hostname`, `/etc/hostname` or a link leading out of the folder would otherwise make
the checker hash (and a publish upload) a file that is no part of the release. Every name is
refused that is absolute, has a `..` component, or passes through a symbolic link. The one
exception is huggingface_hub's own cache, where a downloaded revision is the folder
`snapshots/<commit>/` whose files are links into the same cache's `blobs/`: a link there may
lead to a blob of that cache, nowhere else.

Standard library only: the standalone evaluate.py of every release carries this module in its
evaluator/ (see release/standalone) and refuses the same names.
"""

from __future__ import annotations

from pathlib import Path, PurePosixPath, PureWindowsPath

MANIFEST = "manifest.json"


def shown(name) -> str:
    """A name as a message shows it: as written, quoted only when it holds a control character
    (a message stays on one line)."""
    return name if isinstance(name, str) and name.isprintable() else repr(name)


def _hub_blob(folder: Path, link: Path) -> bool:
    """A link of a Hub cache snapshot (`<repo cache>/snapshots/<commit>/...`) to a file in
    that repo cache's `blobs/`, as huggingface_hub lays out every download."""
    if Path(folder).parent.name != "snapshots":
        return False
    blobs = (Path(folder).parent.parent / "blobs").resolve()
    target = link.resolve()
    return target.parent == blobs and target.is_file()


def unsafe(folder: Path, name) -> str | None:
    """Why the manifest name `name` cannot be read as a file of `folder` (None: it can). Only
    the name and the links on its way are looked at; whether the file exists is the hash
    check's business."""
    if not isinstance(name, str) or not name or "\0" in name:
        return "not a file name"
    if "\\" in name:
        return "a backslash (a release names its files with /)"
    path = PurePosixPath(name)
    if path.is_absolute() or PureWindowsPath(name).drive:
        return "an absolute path"
    if ".." in path.parts:
        return "a `..` component"
    here = Path(folder)
    for n, part in enumerate(path.parts, start=1):
        here = here / part
        if not here.is_symlink():
            continue
        if n == len(path.parts) and _hub_blob(folder, here):
            continue
        try:
            out = not here.resolve().is_relative_to(Path(folder).resolve())
        except (OSError, RuntimeError):  # a loop of links
            out = True
        where = "" if n == len(path.parts) else f"through {'/'.join(path.parts[:n])}, "
        return where + "a symbolic link" + (" leading outside the release folder" if out else "")
    return None


def unsafe_names(folder: Path, names) -> list[str]:
    """'NAME (why)' for every name in `names` that `unsafe` refuses (callers ask about
    MANIFEST itself first, before reading it: a linked manifest.json is refused too)."""
    found = []
    for name in names:
        why = unsafe(folder, name)
        if why:
            found.append(f"{shown(name)} ({why})")
    return found


def refusal(manifest_path, problems: list[str]) -> str:
    """The one-line message for a manifest that names files outside its release folder."""
    return (
        f"{manifest_path} names files outside its release folder or through a link: {'; '.join(problems)}; "
        "a release's files are read only from inside its folder"
    )
