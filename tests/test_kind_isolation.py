"""A broken plugin breaks only itself (issue 45): installed beside the built-in kinds, a plugin
whose evaluator has a syntax error (or whose detect raises, or whose import needs a package that
is missing) is skipped with a one-line warning naming it when `workbench evaluate FILE` looks
for the kind of a file, is listed as broken by `workbench kinds`, and its own commands end in one
line (exit 2), as does `build` of a kind whose standalone module is broken."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from conftest import ROOT, invoke
from support.plugins import plugins_for
from workbench import kinds


@pytest.fixture
def plugins(tmp_path, monkeypatch):
    """Toy kind plugins installed for the test (tests/support/plugins.py)."""
    yield from plugins_for(tmp_path, monkeypatch)


SYNTAX_ERROR = "def detect(path:\n    return True\n"
BROKEN = {
    "a syntax error": (SYNTAX_ERROR, "SyntaxError"),
    "a missing dependency": (
        "import a_package_nobody_installed\n",
        "ModuleNotFoundError: No module named 'a_package_nobody_installed'",
    ),
    "a detect that raises": (
        "def detect(path):\n    raise RuntimeError('detect is broken on purpose')\n",
        "RuntimeError: detect is broken on purpose",
    ),
}


def example_files(tmp_path: Path) -> dict[str, tuple[Path, list[str], str]]:
    """kind -> (its example file, the options it needs, the fixture model it is scored with)."""
    from workbench.kinds.crows_pairs.example import write_example as crows
    from workbench.kinds.honest.example import write_example as honest
    from workbench.kinds.sofa.example import write_example as sofa
    from workbench.kinds.sos.example import write_example as sos
    from workbench.kinds.stereoset.example import write_example as stereoset

    templates, lexicon = honest(tmp_path / "honest")
    return {
        "crows-pairs": (crows(tmp_path / "crows-pairs"), [], "mlm-bert"),
        "sos": (sos(tmp_path / "sos"), [], "mlm-bert"),
        "sofa": (sofa(tmp_path / "sofa"), [], "mlm-bert"),
        "stereoset": (stereoset(tmp_path / "stereoset"), [], "mlm-bert"),
        "honest": (templates, ["--lexicon", str(lexicon)], "mlm-bert"),
        "nli": (ROOT / "templates" / "age" / "work.yaml", [], "nli-a"),  # the example project's templates
    }


def one_line(result) -> str:
    """The message of a command that stopped with exit code 2 and no traceback."""
    assert result.exit_code == 2, result.output
    assert "Traceback" not in result.output
    message = str(result.exception)
    assert "\n" not in message, message
    return message


def test_evaluating_every_built_in_kinds_example_file_without_kind_works_beside_a_plugin_with_a_syntax_error(
    plugins, fixture_models, tmp_path, runner, monkeypatch
):
    plugins.install("broken-eval", evaluate=SYNTAX_ERROR)
    monkeypatch.chdir(tmp_path)
    files = example_files(tmp_path)
    assert sorted(files) == ["crows-pairs", "honest", "nli", "sofa", "sos", "stereoset"]
    for kind, (path, options, model) in files.items():
        out = tmp_path / f"{kind}.json"
        result = invoke(
            runner,
            "evaluate",
            str(path),
            *options,
            "--model",
            str(fixture_models[model]),
            "--json",
            str(out),
            "--no-cache",
        )
        assert result.exit_code == 0, f"{kind}: {result.output}"
        assert json.loads(out.read_text())  # scored
        warning = [line for line in result.stderr.splitlines() if "broken-eval" in line]
        assert len(warning) == 1, result.stderr
        assert warning[0].startswith(
            "warning: kind 'broken-eval' (broken-eval-plugin 0.1.0): its evaluator module "
            "broken_eval_plugin.evaluate cannot be imported: SyntaxError: "
        )
        assert "skipped while recognising" in warning[0] and "Traceback" not in result.output


@pytest.mark.parametrize("broken", sorted(BROKEN))
def test_a_broken_plugin_is_skipped_with_a_warning_when_a_file_s_kind_is_recognised(
    broken, plugins, fixture_models, tmp_path, runner, monkeypatch
):
    from workbench import kinds
    from workbench.kinds.crows_pairs.example import write_example

    source, error = BROKEN[broken]
    plugins.install("broken-eval", evaluate=source)
    monkeypatch.chdir(tmp_path)
    pairs = write_example(tmp_path / "data")
    result = invoke(runner, "evaluate", str(pairs), "--model", str(fixture_models["mlm-bert"]), "--no-cache")
    assert result.exit_code == 0, result.output
    assert "kind 'broken-eval' (broken-eval-plugin 0.1.0): " in result.stderr and error in result.stderr
    # Asked directly, detection says the same and goes on with the other kinds.
    said = []
    assert kinds.detect(str(pairs), report=lambda exc, shown: said.append(str(exc))) == "crows-pairs"
    assert len(said) == 1 and error in said[0] and "broken_eval_plugin.evaluate" in said[0]
    # A release folder without a manifest (--unverified) is recognised past it too.
    release = tmp_path / "release"
    (release / "data").mkdir(parents=True)
    (release / "data" / "pairs.csv").write_bytes(pairs.read_bytes())
    result = invoke(
        runner, "evaluate", str(release), "--unverified", "--model", str(fixture_models["mlm-bert"]), "--no-cache"
    )
    assert result.exit_code == 0, result.output
    assert sum("kind 'broken-eval'" in line for line in result.stderr.splitlines()) == 1, result.stderr


def test_workbench_kinds_lists_a_plugin_with_a_broken_evaluator_as_broken_with_the_reason(plugins, runner, monkeypatch):
    monkeypatch.setenv("COLUMNS", "250")
    plugins.install("broken-eval", evaluate=SYNTAX_ERROR)
    plugins.install("healthy")
    result = invoke(runner, "kinds")
    assert result.exit_code == 0, result.output
    rows = {line.split("│")[1].strip(): line for line in result.stdout.splitlines() if line.count("│") >= 5}
    assert "broken" in rows["broken-eval"] and "broken_eval_plugin.evaluate" in rows["broken-eval"]
    assert "author, annotate, release, evaluate" in rows["healthy"]
    for name in ("crows-pairs", "honest", "nli", "sofa", "sos", "stereoset"):
        assert "broken" not in rows[name], rows[name]
    assert result.stderr.strip() == (
        "kind 'broken-eval' (broken-eval-plugin 0.1.0): its evaluator module "
        "broken_eval_plugin.evaluate cannot be imported: SyntaxError: "
        + result.stderr.split("SyntaxError: ", 1)[1].strip()
    )


def test_the_broken_kinds_own_commands_end_in_one_line(plugins, fixture_models, tmp_path, runner, monkeypatch):
    from workbench.kinds.crows_pairs.example import write_example

    plugins.install("broken-eval", evaluate=SYNTAX_ERROR)
    monkeypatch.chdir(tmp_path)
    pairs = write_example(tmp_path / "data")
    message = one_line(
        invoke(runner, "evaluate", str(pairs), "--kind", "broken-eval", "--model", str(fixture_models["mlm-bert"]))
    )
    assert message.startswith(
        "kind 'broken-eval' (broken-eval-plugin 0.1.0): its evaluator module "
        "broken_eval_plugin.evaluate cannot be imported: SyntaxError: "
    )
    # A plugin whose kind module itself fails is named the same way by its project's commands.
    plugins.install("broken-kind", __init__="raise RuntimeError('this plugin is broken on purpose')\n")
    (tmp_path / "workbench.toml").write_text('[project]\nname = "b"\nkind = "broken-kind"\n')
    message = one_line(invoke(runner, "status"))
    assert "kind 'broken-kind' (broken-kind-plugin 0.1.0)" in message and "broken_kind_plugin:KIND" in message
    assert message.endswith("RuntimeError: this plugin is broken on purpose")


def test_building_a_release_of_a_kind_whose_standalone_module_is_broken_is_one_line_naming_it(
    plugins, tmp_path, runner, monkeypatch
):
    from workbench.core.ids import hypothesis_id

    plugins.install("broken-sa", standalone="TITLE = 'x'\ndef evaluate(:\n")
    project = tmp_path / "project"
    (project / "templates").mkdir(parents=True)
    (project / "templates" / "a.txt").write_text("work | People work hard.\nhome | People cook at home.\n")
    (project / "workbench.toml").write_text('[project]\nname = "sa"\nkind = "broken-sa"\nlicense = "mit"\n')
    monkeypatch.chdir(project)
    assert "expand: done" in invoke(runner, "run").output
    labels = [{"item_id": hypothesis_id(s), "label": "fine"} for s in ("People work hard.", "People cook at home.")]
    (project / "l.jsonl").write_text("".join(json.dumps(r) + "\n" for r in labels))
    assert invoke(runner, "annotate", "-a", "ann", "--labels-from", "l.jsonl").exit_code == 0
    message = one_line(invoke(runner, "build", "--version", "1.0.0"))
    assert message.startswith(
        "kind 'broken-sa' (broken-sa-plugin 0.1.0): its standalone module "
        "broken_sa_plugin.standalone cannot be imported: SyntaxError: "
    )
    assert not (project / "exports" / "sa" / "1.0.0").exists()
    assert not [p for p in (project / "exports").rglob("*") if p.name.startswith(".build-")]  # no staging left


def test_a_syntax_error_in_a_module_the_standalone_evaluator_imports_lazily_is_one_line(plugins):
    from workbench.release.standalone import EvaluatorError, evaluator_files

    standalone = (
        "TITLE = MEASURES = DATA = 'x'\n\n\ndef evaluate(*args):\n"
        "    from broken_lazy_plugin import helper\n    return helper\n"
    )
    folder = plugins.install("broken-lazy", standalone=standalone, helper="def f(:\n")
    with pytest.raises(EvaluatorError) as found:
        evaluator_files(kinds.get("broken-lazy"))
    assert str(found.value) == (
        "the standalone evaluator of broken_lazy_plugin.standalone cannot be built: "
        f"{folder / 'helper.py'}:1: invalid syntax (SyntaxError in broken_lazy_plugin.helper)"
    )
