"""A stage is up to date only for the code that computed it (issue 45): upgrading a plugin whose
parser changed re-runs its `expand` (status says stale, `run` recomputes, the build gets the new
rows), as does editing its code without a new version; `run --force` recomputes a fresh stage."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from conftest import ROOT, invoke
from support.plugins import plugins_for

from workbench.core.ids import hypothesis_id


@pytest.fixture
def plugins(tmp_path, monkeypatch):
    """Toy kind plugins installed for the test (tests/support/plugins.py)."""
    yield from plugins_for(tmp_path, monkeypatch)


TEMPLATES = "work | People work hard.\n# draft | Not a sentence yet.\nhome | People cook at home.\n"
# 0.1.1's parser: lines starting with # are comments (0.1.0 made an item of them)
PARSER_0_1_1 = '''\
def parse(text):
    """(domain, sentence) of every `domain | sentence` line; lines starting with # are comments."""
    return [tuple(part.strip() for part in line.split("|")) for line in text.splitlines()
            if line.strip() and not line.lstrip().startswith("#")]
'''


def states(runner) -> dict[str, str]:
    """stage -> state, from `workbench status`'s table."""
    out = invoke(runner, "status").stdout
    return {
        cells[1].strip(): cells[2].strip()
        for cells in (line.split("│") for line in out.splitlines())
        if len(cells) > 3 and cells[2].strip() in ("fresh", "stale", "missing")
    }


def project(tmp_path: Path, monkeypatch, kind: str) -> Path:
    folder = tmp_path / "project"
    (folder / "templates").mkdir(parents=True)
    (folder / "templates" / "a.txt").write_text(TEMPLATES)
    (folder / "workbench.toml").write_text(f'[project]\nname = "fresh"\nkind = "{kind}"\nlicense = "mit"\n')
    monkeypatch.chdir(folder)
    return folder


def manifest(folder: Path, stage: str) -> dict:
    return json.loads((folder / ".workbench" / stage / "manifest.json").read_text())


def test_upgrading_a_plugin_whose_parser_changed_reruns_expand_and_the_build_gets_the_new_rows(
    plugins, tmp_path, runner, monkeypatch
):
    plugins.install("toy-upgrade", "0.1.0")
    folder = project(tmp_path, monkeypatch, "toy-upgrade")
    result = invoke(runner, "run")
    assert result.exit_code == 0 and "expand: done (rows 3)" in result.output, result.output
    assert manifest(folder, "expand")["code"]["version"] == "0.1.0"
    assert "expand: up to date" in invoke(runner, "run").output

    plugins.upgrade("toy-upgrade", "0.1.1", parser=PARSER_0_1_1)
    assert states(runner)["expand"] == "stale"
    result = invoke(runner, "run")
    assert result.exit_code == 0 and "expand: done (rows 2)" in result.output, result.output
    recorded = manifest(folder, "expand")["code"]
    assert recorded["package"] == "toy-upgrade-plugin" and recorded["version"] == "0.1.1"
    assert states(runner)["expand"] == "fresh"

    labels = [{"item_id": hypothesis_id(s), "label": "fine"} for s in ("People work hard.", "People cook at home.")]
    (folder / "l.jsonl").write_text("".join(json.dumps(r) + "\n" for r in labels))
    assert invoke(runner, "annotate", "-a", "ann", "--labels-from", "l.jsonl").exit_code == 0
    result = invoke(runner, "build", "--version", "1.0.0")
    assert result.exit_code == 0, result.output
    data = (folder / "exports" / "fresh" / "1.0.0" / "data" / "items.csv").read_text()
    assert "People work hard." in data and "Not a sentence yet." not in data


def test_editing_a_plugins_code_or_only_its_version_stales_its_stages(plugins, tmp_path, runner, monkeypatch):
    folder = plugins.install("toy-edit", "0.1.0")
    project(tmp_path, monkeypatch, "toy-edit")
    assert invoke(runner, "run").exit_code == 0
    assert states(runner) == {"expand": "fresh", "validated": "missing"}

    # The same version, one file edited (a plugin installed from a working copy): stale.
    parser = folder / "parser.py"
    parser.write_text(parser.read_text() + "# a comment changes the code\n")
    assert states(runner)["expand"] == "stale"
    assert "expand: done" in invoke(runner, "run").output
    assert states(runner)["expand"] == "fresh"
    # Another version with identical files: stale too (its version is part of what made the rows).
    plugins.upgrade("toy-edit", "0.2.0", parser=parser.read_text())
    assert states(runner)["expand"] == "stale"


def test_run_force_recomputes_a_fresh_stage(plugins, tmp_path, runner, monkeypatch):
    plugins.install("toy-force")
    folder = project(tmp_path, monkeypatch, "toy-force")
    assert invoke(runner, "run").exit_code == 0
    written = (
        manifest(folder, "expand")["data_sha256"],
        (folder / ".workbench" / "expand" / "manifest.json").stat().st_mtime_ns,
    )
    assert "expand: up to date" in invoke(runner, "run").output
    result = invoke(runner, "run", "--force")
    assert result.exit_code == 0 and "expand: done (rows 3)" in result.output, result.output
    again = (
        manifest(folder, "expand")["data_sha256"],
        (folder / ".workbench" / "expand" / "manifest.json").stat().st_mtime_ns,
    )
    assert again[0] == written[0] and again[1] != written[1]  # recomputed: the same rows, written again
    assert states(runner)["expand"] == "fresh"
    assert "expand: rows 3 in" in invoke(runner, "expand", "--force").output  # the single-stage command's --force
    helped = invoke(runner, "run", "--help").output
    assert "--force" in helped and "Recompute every stage" in helped


def test_a_built_in_kinds_code_is_its_folder_hashed_once_until_a_file_changes(tmp_path, monkeypatch):
    from workbench import __version__, kinds
    from workbench.contract import code

    identity = code.identity(kinds.get("crows-pairs"))
    assert identity["package"] == "workbench" and identity["version"] == __version__
    assert code.root_of(code.module_of(kinds.get("crows-pairs"))) == ROOT / "workbench" / "kinds" / "crows_pairs"
    assert len(identity["code"]) == 64

    # A small package of our own: hashed once, then only its files' sizes and mtimes are looked at.
    package = tmp_path / "pkg"
    package.mkdir()
    (package / "a.py").write_text("A = 1\n")
    (package / "__pycache__").mkdir()
    (package / "__pycache__" / "a.cpython-311.pyc").write_bytes(b"ignored")
    reads = []
    real = Path.read_bytes
    monkeypatch.setattr(Path, "read_bytes", lambda self: reads.append(self.name) or real(self))
    first = code.code_hash(package)
    assert reads == ["a.py"]
    assert code.code_hash(package) == first and reads == ["a.py"]
    (package / "a.py").write_text("A = 2\n")
    assert code.code_hash(package) != first and reads == ["a.py", "a.py"]
