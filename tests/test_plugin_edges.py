"""A plugin can break only itself, at the edges of the command line (issue 55): a plugin whose
evaluator option or model role takes a flag of `workbench evaluate` (or of a release's
evaluate.py) is listed as broken with one line, and every command, `--version` first, works as
ever; `--help` and `--version` import no plugin; a plugin that never finishes importing is
reported after a bounded wait. Each plugin is installed into a folder on PYTHONPATH and the
command runs in its own process, so the whole command line is built with the plugin there.
"""

from __future__ import annotations

import json
import time

import pytest
from support.plugins import INIT, plugins_for, workbench


@pytest.fixture
def plugins(tmp_path, monkeypatch):
    yield from plugins_for(tmp_path, monkeypatch)


def with_kind(kind: str, fields: str, head: str = "") -> str:
    """The toy plugin's __init__ with fields of its KIND replaced (`fields`: keyword arguments)."""
    return (
        head
        + INIT.format(kind=kind, standalone=None)
        + (
            "\nimport dataclasses\n"
            "from workbench.core.evaluator_option import EvaluatorOption\n"
            "from workbench.models.roles import ModelRole\n"
            f"KIND = dataclasses.replace(KIND, {fields})\n"
        )
    )


# kind -> (the fields that clash, what `workbench kinds` says of it)
CLASHING = {
    "takes-json": (
        "evaluator_options=(EvaluatorOption('--json', 'mine'),)",
        "--json clashes with workbench evaluate's --json",
    ),
    "takes-device": (
        "model_roles=(ModelRole('judge', '--device', 'a judge'),)",
        "--device clashes with workbench evaluate's --device",
    ),
    "takes-model": (
        "evaluator_options=(EvaluatorOption('--model', 'mine'),)",
        "--model clashes with workbench evaluate's --model",
    ),
    "takes-from-hub": (
        "evaluator_options=(EvaluatorOption('--from-hub', 'mine'),)",
        "--from-hub clashes with a release evaluate.py's --from-hub",
    ),
    "takes-json-out": (
        "evaluator_options=(EvaluatorOption('--json-out', 'mine'),)",
        "--json-out clashes with workbench evaluate's --json",  # its name (json_out) is --json's
    ),
    "spaced": (
        "evaluator_options=(EvaluatorOption('--my option', 'mine'),)",
        "its option '--my option' is not a flag of the form --name",
    ),
}


def test_a_plugin_option_with_a_built_in_flag_is_broken_and_every_command_and_flag_works(
    plugins, tmp_path, fixture_models
):
    from workbench.kinds.crows_pairs.example import write_example

    for kind, (fields, _) in CLASHING.items():
        plugins.install(kind, __init__=with_kind(kind, fields))
    plugins.install(
        "healthy", __init__=with_kind("healthy", "evaluator_options=(EvaluatorOption('--flavour', 'its own'),)")
    )

    version = workbench("--version", cwd=tmp_path, plugins=plugins.root)
    assert version.returncode == 0 and version.stdout == "workbench 0.1.0\n", version.stderr

    listed = workbench("kinds", cwd=tmp_path, plugins=plugins.root, env={"COLUMNS": "250"})
    assert listed.returncode == 0 and "Traceback" not in listed.stderr, listed.stderr
    lines = listed.stderr.strip().splitlines()
    assert len(lines) == len(CLASHING), listed.stderr  # one line per broken plugin, nothing else
    for kind, (_, reason) in CLASHING.items():
        line = next(line for line in lines if f"kind {kind!r}" in line)
        assert reason in line and line.startswith(f"kind {kind!r} from {kind}-plugin 0.1.0 cannot be loaded: ")
    rows = {line.split("│")[1].strip(): line for line in listed.stdout.splitlines() if line.count("│") >= 5}
    assert "broken" not in rows["healthy"] and "broken" not in rows["crows-pairs"]

    helped = workbench("evaluate", "--help", cwd=tmp_path, plugins=plugins.root, env={"COLUMNS": "250"})
    assert helped.returncode == 0, helped.stderr
    assert "--flavour" in helped.stdout and "healthy: its own" in helped.stdout  # the healthy plugin's option
    declared = [line.split()[0] for line in helped.stdout.splitlines() if line.strip().startswith("--")]
    assert declared.count("--json") == 1 and "Write all measures as JSON." in helped.stdout
    assert "mine" not in helped.stdout  # no clashing option was added

    pairs = write_example(tmp_path / "data")
    out = tmp_path / "scores.json"
    model = str(fixture_models["mlm-bert"])
    ran = workbench(
        "evaluate", str(pairs), "--model", model, "--json", str(out), "--no-cache", cwd=tmp_path, plugins=plugins.root
    )
    assert ran.returncode == 0, ran.stderr
    assert json.loads(out.read_text())["kind"] == "crows-pairs"  # --json is workbench's, for every kind

    used = workbench(
        "evaluate", str(pairs), "--kind", "takes-json", "--model", model, cwd=tmp_path, plugins=plugins.root
    )
    assert used.returncode == 2 and "Traceback" not in used.stderr
    assert used.stderr.strip().splitlines()[-1] == (
        "error: kind 'takes-json' (takes-json-plugin 0.1.0): it cannot be loaded from takes_json_plugin:KIND: "
        "its option --json clashes with workbench evaluate's --json: rename it"
    )


def test_help_and_version_import_no_plugin_and_a_plugin_that_never_finishes_importing_is_reported(plugins, tmp_path):
    marker = tmp_path / "imported"
    plugins.install("looping", __init__="while True:\n    pass\n")
    plugins.install(
        "marking", __init__=with_kind("marking", "description='marks'", f"open({str(marker)!r}, 'w').close()\n")
    )
    for args in (["--version"], ["--help"], []):
        started = time.monotonic()
        result = workbench(*args, cwd=tmp_path, plugins=plugins.root, timeout=60)
        assert result.returncode in (0, 2) and "workbench" in result.stdout + result.stderr  # no args: the help
        assert time.monotonic() - started < 30 and not marker.exists(), args

    started = time.monotonic()
    listed = workbench("kinds", cwd=tmp_path, plugins=plugins.root, env={"WORKBENCH_PLUGIN_TIMEOUT": "2"}, timeout=60)
    assert time.monotonic() - started < 30
    assert listed.returncode == 0 and marker.exists(), listed.stderr  # `kinds` imports every plugin
    assert listed.stderr.strip() == (
        "kind 'looping' from looping-plugin 0.1.0 cannot be loaded: its import did not finish in 2 s "
        "(WORKBENCH_PLUGIN_TIMEOUT sets the wait)"
    )
    assert "marks" in listed.stdout

    (tmp_path / "workbench.toml").write_text('[project]\nname = "l"\nkind = "looping"\n')
    used = workbench("status", cwd=tmp_path, plugins=plugins.root, env={"WORKBENCH_PLUGIN_TIMEOUT": "2"}, timeout=60)
    assert used.returncode == 2 and "Traceback" not in used.stderr, used.stderr
    assert used.stderr.strip() == (
        "error: kind 'looping' (looping-plugin 0.1.0): it cannot be loaded from looping_plugin:KIND: its import "
        "did not finish in 2 s (WORKBENCH_PLUGIN_TIMEOUT sets the wait)"
    )
    bad = workbench("kinds", cwd=tmp_path, plugins=plugins.root, env={"WORKBENCH_PLUGIN_TIMEOUT": "soon"}, timeout=60)
    assert (
        bad.returncode == 2
        and bad.stderr.strip() == "error: WORKBENCH_PLUGIN_TIMEOUT='soon': a number of seconds, e.g. 30"
    )


def test_a_plugin_taking_a_built_in_kinds_name_or_another_plugins_is_broken_and_replaces_nothing(plugins, monkeypatch):
    from workbench import kinds
    from workbench.contract import registry
    from workbench.core.errors import ConfigError

    plugins.install("twin")
    (plugins.root / "twin_b").mkdir()
    (plugins.root / "twin_b" / "__init__.py").write_text("KIND = None\n")
    info = plugins.root / "twin_b-0.2.0.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: twin-b\nVersion: 0.2.0\n")
    (info / "entry_points.txt").write_text("[workbench.kinds]\ntwin = twin_b:KIND\nnli = twin_b:KIND\n")
    plugins.forget()
    monkeypatch.setattr(registry, "_ENTRIES", None)

    listed = {(e.name, e.package): e for e in kinds.listing()}
    assert kinds.get("nli").package == "workbench" and listed["nli", "workbench"].error is None
    assert listed["nli", "twin-b"].error == "'nli' is the name of a kind built into workbench: rename it"
    with pytest.raises(ConfigError) as refused:
        kinds.get("twin")
    assert str(refused.value) == (
        "kind 'twin' (twin-b 0.2.0): it cannot be loaded from twin_b:KIND: two packages register it, "
        "twin-b 0.2.0 (twin_b:KIND) and twin-plugin 0.1.0 (twin_plugin:KIND): uninstall one"
    )
