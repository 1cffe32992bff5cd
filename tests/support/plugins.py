"""A kind plugin installed for one test, the way pip installs one: its package and a dist-info
folder (name, version, the entry point under `workbench.kinds`) written into a folder put first
on sys.path, so the registry finds it through `importlib.metadata` like any installed plugin.

The plugin is a toy authoring kind: `domain | sentence` lines of templates/*.txt become the items
of its `expand` stage (parsed by its `parser.py`), people label them, and `build` writes
data/items.csv. Tests replace any of its files (a broken evaluator, a changed parser) and
`upgrade` it to another version in place.
"""

from __future__ import annotations

import importlib
import sys
from pathlib import Path

import pytest

INIT = '''\
"""A toy kind plugin (tests/support/plugins.py)."""
import csv
import io
from pathlib import Path

from workbench.authoring.validated import Validated
from workbench.core.ids import file_sha256, hypothesis_id
from workbench.core.labels import Choice, LabelScheme
from workbench.core.stage import Output, Stage
from workbench.kinds import Kind
from workbench.release import generic

from .parser import parse

NAME = {kind!r}
SCHEME = LabelScheme(NAME + "-scheme", (
    Choice("fine", "fine", None, "1", "a fine sentence", kept=True),
    Choice("odd", "odd", None, "2", "an odd sentence"),
), question="Is the sentence fine?")


class Expand(Stage):
    name = "expand"

    def settings(self, ctx):
        return {{"templates": ctx.config.project.templates}}

    def external_inputs(self, ctx):
        return {{p.name: file_sha256(p) for p in sorted(ctx.config.path("templates").glob("*.txt"))}}

    def compute(self, ctx, inputs, reused):
        import pyarrow as pa

        rows = []
        for path in sorted(ctx.config.path("templates").glob("*.txt")):
            for domain, sentence in parse(path.read_text(encoding="utf-8")):
                rows.append({{"item_id": hypothesis_id(sentence), "hypothesis": sentence, "domain": domain,
                             "subtopic": domain, "template_id": path.stem, "position": len(rows)}})
        return Output(pa.Table.from_pylist(rows))


class Layout:
    @staticmethod
    def write_release(rows, staging):
        (staging / "data").mkdir(parents=True)
        buffer = io.StringIO()
        writer = csv.DictWriter(buffer, ["id", "sentence", "domain"], lineterminator="\\n")
        writer.writeheader()
        for r in sorted(rows, key=lambda r: r["item_id"]):
            writer.writerow({{"id": r["item_id"], "sentence": r["hypothesis"], "domain": r["domain"]}})
        (staging / "data" / "items.csv").write_text(buffer.getvalue())
        return sorted({{r["domain"] for r in rows}})

    @staticmethod
    def read_release(folder):
        return list(csv.DictReader((Path(folder) / "data" / "items.csv").open()))

    @staticmethod
    def card(release):
        return generic.card(release, kind_name=NAME, about="Toy sentences.", fields="`id`, `sentence`, `domain`",
                            data_files={{"all": "data/items.csv"}})

    @staticmethod
    def identity(r):
        return r["id"], r["sentence"], r["domain"], r["domain"]


KIND = Kind(name=NAME, description="a toy plugin kind for tests", stages=lambda: [Expand(), Validated(SCHEME, "expand")],
            scheme=SCHEME, queue_stage="expand", release_stage="validated", run_to="expand", release=Layout,
            evaluator=__name__ + ".evaluate", standalone={standalone})
'''

PARSER = '''\
def parse(text):
    """(domain, sentence) of every `domain | sentence` line."""
    return [tuple(part.strip() for part in line.split("|")) for line in text.splitlines() if line.strip()]
'''

EVALUATE = """\
from pathlib import Path


def detect(path):
    return (Path(path) / "data" / "items.csv").is_file()


def evaluate(request, console):
    return {"kind": "toy"}
"""


class Plugins:
    """Install (and upgrade) toy kind plugins for the test using this fixture."""

    def __init__(self, root: Path, monkeypatch: pytest.MonkeyPatch):
        self.root = root
        self.monkeypatch = monkeypatch
        self.packages: list[str] = []
        root.mkdir(parents=True, exist_ok=True)
        monkeypatch.syspath_prepend(str(root))
        monkeypatch.setattr(sys, "dont_write_bytecode", True)  # an edited module is read again, never a stale .pyc

    def install(self, kind: str, version: str = "0.1.0", **files: str) -> Path:
        """Write the plugin `kind` (package `<kind>_plugin`) at `version`; `files` replace or add
        its modules by name (parser, evaluate, ...; with a `standalone` module its KIND names it
        as its standalone evaluator). Returns the package folder."""
        standalone = "standalone" in files
        from workbench.contract import registry

        package = kind.replace("-", "_") + "_plugin"
        folder = self.root / package
        folder.mkdir(parents=True, exist_ok=True)
        wanted = {
            "__init__": INIT.format(kind=kind, standalone=repr(f"{package}.standalone") if standalone else None),
            "parser": PARSER,
            "evaluate": EVALUATE,
            **files,
        }
        for name, text in wanted.items():
            (folder / f"{name}.py").write_text(text, encoding="utf-8")
        for old in self.root.glob(f"{package}-*.dist-info"):
            for f in old.iterdir():
                f.unlink()
            old.rmdir()
        info = self.root / f"{package}-{version}.dist-info"
        info.mkdir()
        (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {kind}-plugin\nVersion: {version}\n")
        (info / "entry_points.txt").write_text(f"[workbench.kinds]\n{kind} = {package}:KIND\n")
        (info / "top_level.txt").write_text(f"{package}\n")
        self.packages.append(package)
        self.forget()
        self.monkeypatch.setattr(registry, "_ENTRIES", None)  # entry points read again (restored after the test)
        return folder

    upgrade = install

    def forget(self) -> None:
        """Drop the plugins' modules from this process, as a new `workbench` process would start."""
        for name in list(sys.modules):
            if name.split(".")[0] in self.packages:
                del sys.modules[name]
        importlib.invalidate_caches()


def plugins_for(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    """The body of a test file's `plugins` fixture: a Plugins, its modules forgotten afterwards."""
    found = Plugins(tmp_path / "site-packages", monkeypatch)
    yield found
    found.forget()


def workbench(*args: str, cwd: Path, plugins: Path, env: dict | None = None, timeout: float = 120):
    """The `workbench` command in a fresh process with the installed plugins (a `Plugins.root`)
    first on PYTHONPATH: the whole command line is built there, as a user's shell builds it."""
    import os
    import subprocess

    root = Path(__file__).resolve().parents[2]
    path = os.pathsep.join([str(plugins), *filter(None, [os.environ.get("PYTHONPATH")]), str(root)])
    return subprocess.run(
        [sys.executable, "-m", "workbench", *args],
        check=False,
        cwd=cwd,
        env={**os.environ, "PYTHONPATH": path, "HF_HUB_OFFLINE": "1", "WORKBENCH_PROGRESS": "0", **(env or {})},
        capture_output=True,
        text=True,
        timeout=timeout,
    )
