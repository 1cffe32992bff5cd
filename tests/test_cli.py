"""The command line as a user meets it: help, status, stats, suggestions, lazy imports."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest
import typer.main

from conftest import ROOT, invoke
from workbench.cli.main import app


def _all_commands():
    root = typer.main.get_command(app)
    stack = [((), root)]
    while stack:
        path, cmd = stack.pop()
        yield path, cmd
        for name, sub in getattr(cmd, "commands", {}).items():
            stack.append((path + (name,), sub))


@pytest.mark.parametrize("path", [p for p, _ in _all_commands()], ids=lambda p: " ".join(p) or "workbench")
def test_every_help_shows_an_example(runner, path):
    result = invoke(runner, *path, "--help")
    assert result.exit_code == 0, result.output
    assert "Examples:" in result.output
    assert "workbench " + " ".join(path) in result.output


def test_status_goes_missing_fresh_stale(project, runner):
    assert "missing" in invoke(runner, "status").output
    assert invoke(runner, "expand").exit_code == 0
    assert "fresh" in invoke(runner, "status").output
    second = invoke(runner, "expand")
    assert "up to date" in second.output
    path = project / "templates" / "age" / "work.yaml"
    path.write_text(path.read_text().replace("[sales, design]", "[sales, design, support]"))
    assert "stale" in invoke(runner, "status").output
    third = invoke(runner, "expand")
    assert "up to date" not in third.output
    manifest = json.loads((project / ".workbench" / "expand" / "manifest.json").read_text())
    assert manifest["rows"] == 304 + 24 and manifest["counts"]["templates"] == 6
    assert set(manifest["inputs"]) == {
        p.relative_to(project / "templates").as_posix() for p in (project / "templates").rglob("*.yaml")
    }
    for key in ("config_hash", "tool_version", "seconds", "data_sha256"):
        assert key in manifest


def test_stats_tables_per_subtopic_and_domain(project, runner, tmp_path):
    assert invoke(runner, "expand").exit_code == 0
    out = tmp_path / "stats.json"
    result = invoke(runner, "stats", "--json", str(out))
    assert result.exit_code == 0
    tables = json.loads(out.read_text())
    per_sub = tables["Masked templates and samples per subtopic"]
    assert len(per_sub) == 7 and per_sub[-1]["subtopic"] == "total"
    assert per_sub[-1]["masked_templates"] == 18 and per_sub[-1]["masked_samples"] == 192
    per_domain = {r["domain"]: r["masked_samples"] for r in tables["Masked samples per domain"]}
    assert per_domain == {"age": 64, "disability": 64, "gender": 64, "total": 192}


def test_example_benchmark_is_clean_and_covers_three_domains(runner):
    from workbench.kinds.nli.templates.loader import load_templates

    templates, problems = load_templates([ROOT / "templates"])
    assert problems == []
    assert len({t.domain for t in templates}) >= 3 and len(templates) >= 6
    assert all(t.masked_hypotheses for t in templates)


def test_import_refuses_to_overwrite_without_force(bbnli_dir, tmp_path, runner):
    src = bbnli_dir / "gender" / "man_is_to_surgeon.json"
    assert invoke(runner, "templates", "import-bbnli", str(src), "--out", str(tmp_path)).exit_code == 0
    target = tmp_path / "man_is_to_surgeon.yaml"
    target.write_text("# edited by hand\n" + target.read_text())
    again = invoke(runner, "templates", "import-bbnli", str(src), "--out", str(tmp_path))
    assert "not overwritten" in again.output
    assert target.read_text().startswith("# edited by hand")
    invoke(runner, "templates", "import-bbnli", str(src), "--out", str(tmp_path), "--force")
    assert not target.read_text().startswith("# edited by hand")


def test_suggest_masks_follows_three_strategies_without_touching_templates(bbnli_dir, tmp_path, runner):
    from ruamel.yaml import YAML

    src = bbnli_dir / "gender" / "man_is_to_programmer.json"
    before = src.read_bytes()
    out = tmp_path / "s.yaml"
    result = invoke(runner, "templates", "suggest-masks", str(src), "--out", str(out))
    assert result.exit_code == 0, result.output
    suggestions = YAML(typ="safe").load(out)
    by_strategy = {}
    for s in suggestions:
        by_strategy.setdefault(s["strategy"], []).append(s)
    assert set(by_strategy) == {"verb", "replace_placeholder", "add_beside"}
    verb = [s for s in by_strategy["verb"] if s["masked"] == "generate"]
    assert (
        verb
        and verb[0]["suggestion"] == "Compared to {{GROUP2}}, {{GROUP1}} are more likely to <mask:VERB> more {{WORD1}}."
    )
    assert any(
        s["suggestion"] == "{{GROUP2}} are less <mask:ADJ> for jobs in {{MJOB}}."
        for s in by_strategy["replace_placeholder"]
    )
    assert any(
        s["suggestion"] == "{{GROUP2}} are less {{WORD2}} and <mask:ADJ> for jobs in {{MJOB}}."
        for s in by_strategy["add_beside"]
    )
    assert src.read_bytes() == before
    # Every suggestion is itself a valid masked hypothesis.
    from workbench.authoring import text as tt

    assert all(tt.masks(s["suggestion"]) and not tt.syntax_problems(s["suggestion"]) for s in suggestions)


def test_core_imports_stay_light():
    code = (
        "import sys, workbench.core.config, workbench.core.workspace, workbench.core.pipeline, workbench.kinds.nli.templates.loader, "
        "workbench.kinds.nli.templates.expand, workbench.kinds, workbench.cli.main\n"
        "stages = workbench.kinds.get('nli').stages()\n"
        "heavy = [m for m in ('textual', 'torch', 'transformers', 'spacy', 'datasets') if m in sys.modules]\n"
        "print(','.join(heavy))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=ROOT)
    assert out.stdout.strip() == ""


def _imports(path) -> set[str]:
    """Absolute names of the workbench modules a file imports (relative imports resolved)."""
    import ast

    package = ".".join(path.relative_to(ROOT).with_suffix("").parts[:-1])
    names = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom):
            base = package.split(".")[: len(package.split(".")) - node.level + 1] if node.level else []
            module = ".".join(base + ([node.module] if node.module else []))
            names.add(module)
            names.update(f"{module}.{a.name}" for a in node.names)
        elif isinstance(node, ast.Import):
            names.update(a.name for a in node.names)
    return {n for n in names if n == "workbench" or n.startswith("workbench.")}


def test_core_imports_nothing_above_it():
    for path in sorted((ROOT / "workbench" / "core").glob("*.py")):
        above = {
            n
            for n in _imports(path)
            if not n.startswith("workbench.core") and n not in ("workbench", "workbench.__version__")
        }
        assert not above, f"{path.name} imports {sorted(above)}"


def test_no_stage_module_imports_another_stage():
    stage_files = sorted(
        p for p in (ROOT / "workbench" / "kinds" / "nli" / "stages").glob("*.py") if p.name != "__init__.py"
    )
    names = {f"workbench.kinds.nli.stages.{p.stem}" for p in stage_files}
    assert len(names) == 6
    for path in stage_files:
        others = {
            n
            for n in _imports(path)
            if any(n == m or n.startswith(m + ".") for m in names - {f"workbench.kinds.nli.stages.{path.stem}"})
        }
        assert not others, f"{path.name} imports {sorted(others)}"


def test_missing_config_file_is_a_clear_error(tmp_path, runner, monkeypatch):
    monkeypatch.chdir(tmp_path)
    result = invoke(runner, "--config", str(tmp_path / "nope.toml"), "validate")
    assert result.exit_code == 2
    assert "config file not found" in str(result.exception)


def test_main_prints_errors_to_stderr_with_exit_2(tmp_path):
    out = subprocess.run(
        [sys.executable, "-m", "workbench", "--config", str(tmp_path / "nope.toml"), "status"],
        capture_output=True,
        text=True,
        cwd=tmp_path,
    )
    assert out.returncode == 2
    assert "error: config file not found" in out.stderr
    assert "Traceback" not in out.stderr


def test_command_docs_are_current():
    from workbench.cli.docs import commands_markdown

    assert (ROOT / "docs" / "commands.md").read_text() == commands_markdown(), (
        "docs/commands.md is stale: run `python -m workbench.cli.docs > docs/commands.md`"
    )


def test_code_has_no_unused_or_undefined_names():
    out = subprocess.run(
        [sys.executable, "-m", "ruff", "check", "--select", "F,E9", "workbench", "tests", "benchmarks"],
        capture_output=True,
        text=True,
        cwd=ROOT,
    )
    assert out.returncode == 0, out.stdout[-3000:]


def test_run_goes_through_the_machine_stages_and_skips_when_fresh(project, runner, fixture_models):
    (project / "workbench.toml").write_text(
        f'[generate]\nmodel = "{fixture_models["mlm-bert"]}"\ntop_k = 3\n'
        f'[filter]\nmodels = ["{fixture_models["nli-c"]}"]\n[evaluate]\nmodels = []\n'
    )
    first = invoke(runner, "run")
    assert first.exit_code == 0, first.output
    assert [line.split(":")[0] for line in first.output.splitlines()] == [
        "expand",
        "generate",
        "filter",
        "fluency",
        "queue",
    ]
    assert "up to date" not in first.output
    second = invoke(runner, "run", "--to", "filter")
    assert second.output.count("up to date") == 3 and "queue" not in second.output and "fluency" not in second.output
    assert invoke(runner, "run", "--to", "nowhere").exit_code == 2


def test_candidates_shows_provenance_and_reasons(project, runner, fixture_models, tmp_path):
    (project / "workbench.toml").write_text(f'[generate]\nmodel = "{fixture_models["mlm-bert"]}"\ntop_k = 5\n')
    assert invoke(runner, "run", "--to", "generate").exit_code == 0
    out = tmp_path / "kept.json"
    kept = invoke(runner, "candidates", "--template", "age_work", "--limit", "0", "--json", str(out))
    assert kept.exit_code == 0 and "mlm-bert @ sha256:" in kept.output
    rows = json.loads(out.read_text())
    assert rows and all(r["kept"] and r["template_id"] == "age_work" for r in rows)
    rejected = invoke(runner, "candidates", "--reason", "pos", "--json", str(out))
    rows = json.loads(out.read_text())
    assert rejected.exit_code == 0 and len(rows) == 10 and all(r["reject_reason"] == "pos" for r in rows)


def test_unwritable_label_file_is_a_message_not_a_traceback(tmp_path):
    from workbench.kinds.nli.fixtures import synthetic_queue

    synthetic_queue(tmp_path / ".workbench", 3)
    (tmp_path / "annotations" / "x.jsonl").mkdir(parents=True)  # a folder where the label file should be
    (tmp_path / "labels.jsonl").write_text(json.dumps({"item_id": "item000000", "label": "invalid"}) + "\n")
    (tmp_path / "workbench.toml").write_text("")
    code = (
        "import sys; "
        "from workbench.cli.main import main; sys.argv = ['workbench', 'annotate', '-a', 'x', '--labels-from', 'labels.jsonl']; main()"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=tmp_path)
    assert out.returncode == 2
    assert "Traceback" not in out.stderr and "x.jsonl" in out.stderr
