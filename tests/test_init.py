"""`workbench init`, `--version` and docs/config.md: a new project from nothing, with every setting shown."""

import re
import tomllib
from pathlib import Path

import pytest

from conftest import invoke
from workbench import kinds

ROOT = Path(__file__).resolve().parents[1]


def test_version_prints_the_package_version(runner):
    import workbench

    result = invoke(runner, "--version")
    assert result.exit_code == 0 and result.output.strip() == f"workbench {workbench.__version__}"


@pytest.mark.parametrize("kind", ["nli", "crows-pairs", "sofa", "honest", "sos", "stereoset"])
def test_init_writes_a_project_that_validates_and_never_overwrites(kind, tmp_path, monkeypatch, runner):
    folder = tmp_path / "My Bench"
    result = invoke(runner, "init", str(folder), "--kind", kind)
    assert result.exit_code == 0, result.output
    config = folder / "workbench.toml"
    data = tomllib.loads(config.read_text())
    assert data["project"] == {"name": "My-Bench", "kind": kind}
    examples = kinds.get(kind).part("example").EXAMPLE_TEMPLATES
    written = sorted(str(p.relative_to(folder / "templates")) for p in (folder / "templates").rglob("*.yaml"))
    assert written == sorted(examples)  # every example file, not only the first
    assert all((folder / "templates" / f).read_text() == text for f, text in examples.items())
    monkeypatch.chdir(folder)
    checked = invoke(runner, "validate")
    assert checked.exit_code == 0 and " 0 error(s)" in checked.output, checked.output
    if kind not in ("nli", "stereoset"):  # those need models; the others run to their queue at once
        assert invoke(runner, "run").exit_code == 0
        assert (folder / ".workbench" / "queue").exists()
    config.write_text(config.read_text() + "\n# my edit\n")
    before = config.read_text()
    again = invoke(runner, "init", str(folder), "--kind", kind)
    assert again.exit_code == 2 and "never overwrites" in str(again.exception)
    assert config.read_text() == before


def test_every_commented_setting_is_its_real_default(tmp_path, runner):
    """Uncommenting every line of the written file gives a config equal to the built-in defaults:
    the file shows what the workbench really does."""
    from workbench import kinds
    from workbench.core.config import Config, load_config

    assert invoke(runner, "init", str(tmp_path / "p"), "--kind", "nli").exit_code == 0
    text = (tmp_path / "p" / "workbench.toml").read_text()
    uncommented = "\n".join(
        re.sub(r"^# (\w+ = .*)$", r"\1", line) for line in text.splitlines() if "(unset;" not in line
    )
    (tmp_path / "p" / "workbench.toml").write_text(uncommented)
    config = load_config(tmp_path / "p" / "workbench.toml")
    kind = kinds.get("nli")
    defaults = Config()
    for section in ("project", "generate", "evaluate", "annotation", "labelstudio"):
        got, want = getattr(config, section).model_dump(), getattr(defaults, section).model_dump()
        if section == "project":
            want.update(name="p", kind="nli")
        assert got == want, section
    for section, model in kind.settings.items():
        assert config.section(section, model) == model(), section
    assert not kinds.settings_problems(config)


def test_config_reference_is_current_and_describes_every_setting():
    from workbench import kinds
    from workbench.cli.init import config_markdown as generated, sections_of

    assert (ROOT / "docs" / "config.md").read_text() == generated(), (
        "docs/config.md is stale: run `python -m workbench.cli.docs config > docs/config.md`"
    )
    for kind in (e.kind for e in kinds.listing() if e.kind is not None):
        for section, model, _ in sections_of(kind):
            missing = [k for k, f in model.model_fields.items() if not f.description]
            assert not missing, f"[{section}] settings without a description: {missing}"


def test_a_kind_s_annotation_defaults_are_shown_by_init_and_read_everywhere_alike(tmp_path, runner):
    """StereoSet keeps a sentence when 3 of its 5 validators agree: a project that sets nothing gets
    that policy in the shared readers too (build, stats, Label Studio), and `init` shows it."""
    from workbench import kinds
    from workbench.annotation.store import LabelStore
    from workbench.annotation.summary import final_labels_for
    from workbench.core.config import load_config

    assert invoke(runner, "init", str(tmp_path / "p"), "--kind", "stereoset").exit_code == 0
    text = (tmp_path / "p" / "workbench.toml").read_text()
    assert (
        '# policy = "majority"   # stereoset\'s default' in text
        and "# validators = 5" in text
        and "# min_votes = 3" in text
    )
    config = load_config(tmp_path / "p" / "workbench.toml")
    kind = kinds.of_config(config)
    ac = config.annotation
    assert (ac.policy, ac.min_votes) == ("majority", 3) and not {"policy", "min_votes"} & ac.model_fields_set
    votes = ["stereotype", "stereotype", "stereotype", "unrelated", "unrelated"]
    for n, vote in enumerate(votes):
        store = LabelStore(config.path("annotations"), f"v{n}", scheme=kind.scheme)
        store.label("s1", vote)
        store.close()
    final = final_labels_for(config, ["s1"], kind.scheme).finals["s1"]
    assert (final.status, final.category) == ("final", "stereotype")  # 3 of 5, as StereoSet's own stage keeps it
    # uncommenting the written lines changes nothing; a project's own choice wins over the kind's
    uncommented = "\n".join(
        re.sub(r"^# (\w+ = .*)$", r"\1", line) for line in text.splitlines() if "(unset;" not in line
    )
    (tmp_path / "p" / "workbench.toml").write_text(uncommented)
    chosen = load_config(tmp_path / "p" / "workbench.toml")
    kinds.of_config(chosen)
    assert (chosen.annotation.policy, chosen.annotation.min_votes, chosen.annotation.validators) == ("majority", 3, 5)
    (tmp_path / "p" / "workbench.toml").write_text('[project]\nkind = "stereoset"\n[annotation]\npolicy = "single"\n')
    own = load_config(tmp_path / "p" / "workbench.toml")
    kinds.of_config(own)
    assert own.annotation.policy == "single"
    # a renewal's audit is no StereoSet validation: its defaults do not carry over
    (tmp_path / "p" / "workbench.toml").write_text('[project]\nkind = "stereoset"\n[origin]\nname = "StereoSet"\n')
    audit = load_config(tmp_path / "p" / "workbench.toml")
    kinds.of_config(audit)
    assert audit.annotation.policy == "single"
