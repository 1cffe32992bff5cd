"""Counterfactuals, versioned builds, and publishing to / pulling from a Hub over real HTTP."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys

import pyarrow.parquet as pq
import pytest

from conftest import ROOT, invoke
from support.hub_server import HubServer
from workbench.kinds.nli.templates.counterfactual import counterfactual, sentence_case

TOKEN = "hf_test_Zq8Kx2LmN4pR7sT1"


@pytest.mark.parametrize(
    "template, bindings, groups, fills, expected",
    [
        ("{{GROUP1}} are <mask> at work.", {}, {"GROUP1": "women", "GROUP2": "men"}, ["lazy"], "Men are lazy at work."),
        (
            "{{GROUP1}} earn more than {{GROUP2}} in {{JOB}}.",
            {"JOB": "tech"},
            {"GROUP1": "White people", "GROUP2": "Black people"},
            [],
            "Black people earn more than White people in tech.",
        ),
        (
            "{{GROUP1}} is a <mask> group.",
            {},
            {"GROUP1": "a religious minority", "GROUP2": "Catholics"},
            ["quiet"],
            "Catholics are a quiet group.",
        ),
        (
            "Every {{GROUP1}} family is <mask>.",
            {},
            {"GROUP1": "Muslim", "GROUP2": "Christian"},
            ["large"],
            "Every Christian family is large.",
        ),
        (
            "{{GROUP2}} has an <mask> view.",
            {},
            {"GROUP1": "older workers", "GROUP2": "the board"},
            ["old"],
            "Older workers have an old view.",
        ),
        (
            "They hired an {{GROUP1}} worker.",
            {},
            {"GROUP1": "older", "GROUP2": "younger"},
            [],
            "They hired a younger worker.",
        ),
        ("Nobody is <mask> here.", {}, {"GROUP1": "a", "GROUP2": "b"}, ["calm"], None),
        # A bare plural swapped for a bare singular noun gets an article where it opens a noun
        # phrase, and none after a word that modifies it or in a possessive.
        (
            "{{GROUP1}} are <mask> at work.",
            {},
            {"GROUP1": "women", "GROUP2": "engineer"},
            ["calm"],
            "An engineer is calm at work.",
        ),
        (
            "The firm hired {{GROUP1}} for the job.",
            {},
            {"GROUP1": "women", "GROUP2": "man"},
            [],
            "The firm hired a man for the job.",
        ),
        ("They said: {{GROUP1}} are weak.", {}, {"GROUP1": "women", "GROUP2": "man"}, [], "They said: a man is weak."),
        ("Young {{GROUP1}} are <mask>.", {}, {"GROUP1": "women", "GROUP2": "man"}, ["lazy"], "Young man is lazy."),
        (
            "The firm hired older {{GROUP1}}.",
            {},
            {"GROUP1": "women", "GROUP2": "man"},
            [],
            "The firm hired an older man.",
        ),
        (
            "They said: very young {{GROUP1}} are weak.",
            {},
            {"GROUP1": "women", "GROUP2": "man"},
            [],
            "They said: a very young man is weak.",
        ),
        (
            "Their young {{GROUP1}} were calm.",
            {},
            {"GROUP1": "women", "GROUP2": "man"},
            [],
            "Their young man was calm.",
        ),
        ("The {{GROUP1}} are <mask>.", {}, {"GROUP1": "women", "GROUP2": "man"}, ["lazy"], "The man is lazy."),
        ("Their {{GROUP1}} were calm.", {}, {"GROUP1": "sons", "GROUP2": "daughter"}, [], "Their daughter was calm."),
        ("{{GROUP1}}'s jobs are hard.", {}, {"GROUP1": "women", "GROUP2": "man"}, [], "Man's jobs are hard."),
        ("{{GROUP1}} are calm.", {}, {"GROUP1": "women", "GROUP2": "the board"}, [], "The board is calm."),
    ],
)
def test_counterfactual_text(template, bindings, groups, fills, expected):
    assert counterfactual(template, bindings, groups, fills) == expected


def test_sentence_case():
    assert sentence_case("older people cannot cope.") == "Older people cannot cope."
    assert sentence_case('"quoted" text') == '"Quoted" text'


@pytest.fixture
def labelled_project(tmp_path, fixture_models, monkeypatch):
    """The example benchmark through expand/generate/filter on fixture models, labelled."""
    shutil.copytree(ROOT / "templates", tmp_path / "templates")
    (tmp_path / "workbench.toml").write_text(
        '[project]\nname = "demo-bias"\nrepo = "test-org/demo-bias"\nlicense = "cc-by-4.0"\n'
        f'[generate]\nmodel = "{fixture_models["mlm-bert"]}"\ntop_k = 5\n'
        f'[filter]\nmodels = ["{fixture_models["nli-a"]}", "{fixture_models["nli-c"]}"]\n[evaluate]\nmodels = []\n'
    )
    monkeypatch.chdir(tmp_path)
    from typer.testing import CliRunner

    runner = CliRunner()
    for step in (["expand"], ["generate"], ["filter"], ["run"]):
        assert invoke(runner, *step).exit_code == 0
    items = pq.read_table(tmp_path / ".workbench" / "queue" / "data.parquet").to_pylist()
    write_labels(
        tmp_path / "labels.jsonl", items, lambda k: ["valid-pro", "valid-anti", "invalid", "incoherent"][k % 4]
    )
    assert invoke(runner, "annotate", "-a", "alice", "--labels-from", str(tmp_path / "labels.jsonl")).exit_code == 0
    return tmp_path


def write_labels(path, items, category):
    path.write_text(
        "".join(json.dumps({"item_id": i["item_id"], "label": category(k)}) + "\n" for k, i in enumerate(items))
    )


def release_rows(folder):
    return pq.read_table(folder / "data" / "all.parquet").to_pylist()


def test_counterfactuals_pair_every_valid_sample(labelled_project, runner):
    result = invoke(runner, "counterfactuals")
    assert result.exit_code == 0, result.output
    rows = pq.read_table(labelled_project / ".workbench" / "counterfactuals" / "data.parquet").to_pylist()
    pairs = {}
    for r in rows:
        assert r["label"] == "neutral"
        pairs.setdefault(r["pair_id"], []).append(r)
    for members in pairs.values():
        assert sorted(m["stance"] for m in members) == ["anti", "pro"]
        original, cf = sorted(members, key=lambda m: m["is_counterfactual"])
        assert original["premise"] == cf["premise"]  # the premise is unchanged
        assert not original["is_counterfactual"]
        assert original["hypothesis"] != cf["hypothesis"]
    assert len({(r["premise"], r["hypothesis"]) for r in rows}) == len(rows)  # no duplicates


def test_counterfactual_that_is_a_kept_sample_is_paired_not_duplicated(fixture_models, tmp_path, monkeypatch, runner):
    # The premise names no group, so a sample's counterfactual is its own anti sample.
    (tmp_path / "templates").mkdir()
    (tmp_path / "templates" / "t.yaml").write_text(
        "format: workbench-template/1\nid: t\ndomain: gender\ngroups: {GROUP1: women, GROUP2: men}\n"
        "premises:\n  - text: A survey asked people about work.\n"
        "hypotheses:\n  - {text: '{{GROUP1}} are <mask> at work.', true_label: neutral, bias_label: entailment}\n"
    )
    (tmp_path / "workbench.toml").write_text(
        f'[generate]\nmodel = "{fixture_models["mlm-bert"]}"\ntop_k = 8\nfilters = ["subword"]\n'
        f'[filter]\nmodels = ["{fixture_models["nli-c"]}"]\n[evaluate]\nmodels = []\n'
    )
    monkeypatch.chdir(tmp_path)
    for step in (["expand"], ["generate"], ["filter"], ["run"]):
        assert invoke(runner, *step).exit_code == 0
    items = pq.read_table(tmp_path / ".workbench" / "queue" / "data.parquet").to_pylist()
    write_labels(tmp_path / "l.jsonl", items, lambda k: "valid-pro")
    invoke(runner, "annotate", "-a", "a", "--labels-from", str(tmp_path / "l.jsonl"))
    result = invoke(runner, "counterfactuals")
    assert result.exit_code == 0, result.output
    assert "paired with existing samples" in result.output
    rows = pq.read_table(tmp_path / ".workbench" / "counterfactuals" / "data.parquet").to_pylist()
    assert len({(r["premise"], r["hypothesis"].lower()) for r in rows}) == len(rows)
    assert any(not r["is_counterfactual"] for r in rows if r["stance"] == "anti")


def test_build_is_byte_identical_and_complete(labelled_project, runner):
    assert invoke(runner, "build", "--version", "1.0.0").exit_code == 0
    folder = labelled_project / "exports" / "demo-bias" / "1.0.0"
    first = {p.relative_to(folder): p.read_bytes() for p in folder.rglob("*") if p.is_file()}
    shutil.rmtree(folder)
    assert invoke(runner, "build", "--version", "1.0.0").exit_code == 0
    second = {p.relative_to(folder): p.read_bytes() for p in folder.rglob("*") if p.is_file()}
    assert first == second
    names = {str(p) for p in first}
    assert {"README.md", "manifest.json", "CHANGELOG.md", "evaluate.py", "data/all.parquet"} <= names
    from pathlib import Path

    manifest = json.loads(first[Path("manifest.json")])
    import hashlib

    for name, digest in manifest["files"].items():
        assert hashlib.sha256((folder / name).read_bytes()).hexdigest() == digest
    # every file is in the manifest, the code evaluate.py runs (evaluator/...) too
    assert set(manifest["files"]) == names - {"manifest.json"}
    assert (
        "evaluator/workbench/release/runtime/cli.py" in names and "evaluator/workbench/kinds/nli/evaluate.py" in names
    )
    assert set(manifest["templates"]) and manifest["version"] == "1.0.0"
    card = (folder / "README.md").read_text()
    header = card.split("---")[1]
    import yaml

    meta = yaml.safe_load(header)
    assert {c["config_name"] for c in meta["configs"]} == {"all", "age", "disability", "gender"}
    assert meta["license"] == "cc-by-4.0" and meta["task_categories"] and meta["size_categories"]
    for section in (
        "Content warning",
        "How to evaluate",
        "Construction funnel per subtopic",
        "Construction funnel per domain",
        "## Models",
        "## Annotation",
        "Known limitations",
        "## Citation",
        "test-org/demo-bias@v1.0.0",
    ):
        assert section in card, section
    assert "DATASET = 'test-org/demo-bias@v1.0.0'" in (folder / "evaluate.py").read_text()
    # `pip install workbench` is another project on the package index: the card names ours.
    import importlib.metadata

    assert "pip install bias-workbench" in card and "pip install workbench " not in card
    assert importlib.metadata.metadata("bias-workbench")["Name"] == "bias-workbench"
    # A different build of the same version is refused without --force.
    items = pq.read_table(labelled_project / ".workbench" / "queue" / "data.parquet").to_pylist()
    write_labels(labelled_project / "more.jsonl", items[:4], lambda k: "invalid")
    invoke(runner, "annotate", "-a", "alice", "--labels-from", str(labelled_project / "more.jsonl"))
    refused = invoke(runner, "build", "--version", "1.0.0")
    assert refused.exit_code == 2 and "already holds a different build" in str(refused.exception)
    assert {p.relative_to(folder): p.read_bytes() for p in folder.rglob("*") if p.is_file()} == second
    assert invoke(runner, "build", "--version", "1.1.0").exit_code == 0
    v11 = labelled_project / "exports" / "demo-bias" / "1.1.0"
    changelog = (v11 / "CHANGELOG.md").read_text()
    assert "Compared with 1.0.0" in changelog and "| **total** | 0 |" in changelog and "removed" in changelog
    assert "exports/" not in changelog and str(labelled_project) not in changelog  # the Hub revision, no path
    assert "## 1.0.0" in changelog and "First release." in changelog  # earlier entries are kept
    removed = [line.split(",") for line in (v11 / "changes.csv").read_text().splitlines()[1:]]
    gone = {r["id"] for r in release_rows(folder)} - {r["id"] for r in release_rows(v11)}
    assert {r[1] for r in removed} == gone and gone and all(r[0] == "removed" for r in removed)
    assert "removed (labels changed)" in changelog
    card = (v11 / "README.md").read_text()
    assert "## Changes since 1.0.0" in card and "Some removed:" in card and "`changes.csv`" in card
    # The same data again is not a new version, unless forced.
    same = invoke(runner, "build", "--version", "1.2.0")
    assert same.exit_code == 2 and "nothing changed in the data since 1.1.0" in str(same.exception)
    assert not (labelled_project / "exports" / "demo-bias" / "1.2.0").exists()
    assert invoke(runner, "build", "--version", "1.2.0", "--force").exit_code == 0


@pytest.fixture
def hub():
    server = HubServer(tokens={TOKEN}).start()
    yield server
    server.stop()


def run_cli(project, hub, *args, token=TOKEN, endpoint=None):
    env = {
        **os.environ,
        "HF_ENDPOINT": endpoint or hub.url,
        "HF_HOME": str(project / ".hf-home"),
        "HF_HUB_DISABLE_TELEMETRY": "1",
        "HF_HUB_DISABLE_XET": "1",
        "WORKBENCH_PROGRESS": "0",
    }
    env.pop("HF_HUB_OFFLINE", None)
    if token is None:
        env.pop("HF_TOKEN", None)
    else:
        env["HF_TOKEN"] = token
    return subprocess.run(
        [sys.executable, "-m", "workbench", *args], cwd=project, env=env, capture_output=True, text=True, timeout=300
    )


def test_publish_two_versions_load_each_refuse_republish(labelled_project, runner, hub, fixture_models):
    outputs = []

    def cli(*args, **kw):
        r = run_cli(labelled_project, hub, *args, **kw)
        outputs.append(r.stdout + r.stderr)
        return r

    assert invoke(runner, "build", "--version", "1.0.0").exit_code == 0
    dry = cli("publish", "--repo", "test-org/demo-bias", "--version", "1.0.0", "--dry-run")
    assert dry.returncode == 0 and "would upload" in dry.stdout and "data/all.parquet" in dry.stdout
    assert hub.state.repos == {}  # the dry run changed nothing
    assert cli("publish", "--version", "1.0.0").returncode == 0
    v1 = release_rows(labelled_project / "exports" / "demo-bias" / "1.0.0")

    items = pq.read_table(labelled_project / ".workbench" / "queue" / "data.parquet").to_pylist()
    write_labels(labelled_project / "more.jsonl", items, lambda k: "valid-pro" if k % 2 else "invalid")
    invoke(runner, "annotate", "-a", "alice", "--labels-from", str(labelled_project / "more.jsonl"))
    assert invoke(runner, "build", "--version", "1.1.0").exit_code == 0
    assert cli("publish", "--version", "1.1.0").returncode == 0
    v11 = release_rows(labelled_project / "exports" / "demo-bias" / "1.1.0")
    assert len(v1) != len(v11)

    repo = hub.state.repos[("dataset", "test-org/demo-bias")]
    before = (dict(repo.branches), dict(repo.tags), len(repo.commits))
    again = cli("publish", "--version", "1.0.0")
    assert again.returncode == 2 and "already has a release v1.0.0" in again.stderr
    assert (dict(repo.branches), dict(repo.tags), len(repo.commits)) == before

    code = (
        "import datasets, json, sys\n"
        "for rev in ('v1.0.0', 'v1.1.0'):\n"
        "    ds = datasets.load_dataset('test-org/demo-bias', 'all', revision=rev, split='test')\n"
        "    g = datasets.load_dataset('test-org/demo-bias', 'gender', revision=rev, split='test')\n"
        "    print(json.dumps([rev, len(ds), sorted(ds['id']), sorted(set(g['domain']))]))\n"
    )
    env = {
        **os.environ,
        "HF_ENDPOINT": hub.url,
        "HF_HOME": str(labelled_project / ".hf-home"),
        "HF_TOKEN": TOKEN,
        "HF_HUB_DISABLE_XET": "1",
    }
    env.pop("HF_HUB_OFFLINE", None)
    loaded = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=300)
    assert loaded.returncode == 0, loaded.stderr[-2000:]
    outputs.append(loaded.stdout + loaded.stderr)
    got = [json.loads(line) for line in loaded.stdout.splitlines() if line.startswith("[")]
    assert got[0] == ["v1.0.0", len(v1), sorted(r["id"] for r in v1), ["gender"]]
    assert got[1] == ["v1.1.0", len(v11), sorted(r["id"] for r in v11), ["gender"]]

    pulled = cli("pull", "test-org/demo-bias@v1.0.0", "--out", str(labelled_project / "pulled"))
    assert pulled.returncode == 0, pulled.stderr
    assert release_rows(labelled_project / "pulled") == v1
    # files in subfolders went up and came back, checked against the manifest: evaluate.py's code
    built = labelled_project / "exports" / "demo-bias" / "1.0.0"
    code = sorted(p.relative_to(built).as_posix() for p in (built / "evaluator").rglob("*") if p.is_file())
    assert code and all((labelled_project / "pulled" / f).read_bytes() == (built / f).read_bytes() for f in code)

    scored = cli(
        "evaluate", "test-org/demo-bias@v1.1.0", "--model", str(fixture_models["nli-a"]), "--json", "scores.json"
    )
    assert scored.returncode == 0, scored.stderr[-2000:]
    scores = json.loads((labelled_project / "scores.json").read_text())
    assert scores["dataset"]["repo"] == "test-org/demo-bias" and scores["dataset"]["revision"] == "v1.1.0"

    # The token is nowhere: not in any file of the project or the Hub cache, not in any output.
    for path in labelled_project.rglob("*"):
        if path.is_file():
            assert TOKEN.encode() not in path.read_bytes(), path
    assert all(TOKEN not in text for text in outputs)
    assert all(TOKEN.encode() not in data for commit in repo.commits.values() for data in commit.files.values())


def test_publish_errors_are_clear(labelled_project, runner, hub):
    missing = run_cli(labelled_project, hub, "publish", "--version", "9.9.9")
    assert missing.returncode == 2 and "run `workbench build --version 9.9.9` first" in missing.stderr
    assert invoke(runner, "build", "--version", "1.0.0").exit_code == 0
    bad = run_cli(labelled_project, hub, "publish", "--version", "1.0.0", token="hf_wrong_token_value")
    assert bad.returncode == 2 and "refused the token (401)" in bad.stderr and "hf_wrong_token_value" not in bad.stderr
    assert hub.state.repos == {}
    down = run_cli(labelled_project, hub, "publish", "--version", "1.0.0", endpoint="http://127.0.0.1:9")
    assert down.returncode == 2 and "cannot reach the Hub at http://127.0.0.1:9" in down.stderr
    assert "Traceback" not in missing.stderr + bad.stderr + down.stderr
    other = run_cli(labelled_project, hub, "publish", "--repo", "someone/else", "--version", "1.0.0")
    assert other.returncode == 2 and "pin test-org/demo-bias" in other.stderr


def hub_api(hub, monkeypatch):
    from huggingface_hub import HfApi, constants

    # Both are read when huggingface_hub is imported: setting the variables now would be too late.
    monkeypatch.setattr(constants, "HF_HUB_DISABLE_XET", True)
    monkeypatch.setattr(constants, "HF_HUB_OFFLINE", False)
    return HfApi(endpoint=hub.url, token=TOKEN)


def test_publish_never_deletes_what_it_did_not_write_and_never_rewinds_main(labelled_project, runner, hub, monkeypatch):
    def cli(*args):
        return run_cli(labelled_project, hub, *args)

    exports = labelled_project / "exports" / "demo-bias"
    assert invoke(runner, "build", "--version", "1.0.0").exit_code == 0
    assert cli("publish", "--version", "1.0.0").returncode == 0
    repo = hub.state.repos[("dataset", "test-org/demo-bias")]
    assert any("/info/lfs/objects/batch" in r for r in hub.state.requests)  # Parquet files take the LFS path
    assert hub.state.lfs_blobs and all(p in repo.commits[repo.branches["main"]].files for p in ("data/all.parquet",))
    # Someone adds a file of their own on main.
    api = hub_api(hub, monkeypatch)
    api.upload_file(
        path_or_fileobj=b"our notes\n", path_in_repo="NOTES.md", repo_id="test-org/demo-bias", repo_type="dataset"
    )
    # 1.1.0 drops the disability domain (every disability item labelled invalid), so its file goes.
    items = pq.read_table(labelled_project / ".workbench" / "queue" / "data.parquet").to_pylist()
    labels = {i["item_id"]: "invalid" if i["domain"] == "disability" else "valid-pro" for i in items}
    (labelled_project / "v11.jsonl").write_text(
        "".join(json.dumps({"item_id": k, "label": v}) + "\n" for k, v in labels.items())
    )
    assert (
        invoke(runner, "annotate", "-a", "alice", "--labels-from", str(labelled_project / "v11.jsonl")).exit_code == 0
    )
    assert invoke(runner, "build", "--version", "1.1.0").exit_code == 0
    assert not (exports / "1.1.0" / "data" / "disability.parquet").exists()
    dry = cli("publish", "--version", "1.1.0", "--dry-run")
    assert dry.returncode == 0, dry.stderr
    assert "would delete data/disability.parquet (written by an earlier release" in dry.stdout
    assert "would keep NOTES.md (not written by any release" in dry.stdout
    done = cli("publish", "--version", "1.1.0")
    assert done.returncode == 0, done.stderr
    head = repo.commits[repo.branches["main"]]
    assert head.files["NOTES.md"] == b"our notes\n" and "data/disability.parquet" not in head.files
    assert head.files["data/all.parquet"] == (exports / "1.1.0" / "data" / "all.parquet").read_bytes()
    # An older version published later is tagged, and main stays at 1.1.0.
    assert invoke(runner, "build", "--version", "1.0.1").exit_code == 0
    main_before = repo.branches["main"]
    older = cli("publish", "--version", "1.0.1")
    assert older.returncode == 0, older.stderr
    assert "older than the newest release v1.1.0" in older.stdout
    assert repo.branches["main"] == main_before and set(repo.branches) == {"main"}
    tagged = repo.commits[repo.tags["v1.0.1"]].files
    assert tagged["data/all.parquet"] == (exports / "1.0.1" / "data" / "all.parquet").read_bytes()
    assert "data/disability.parquet" not in tagged or (exports / "1.0.1" / "data" / "disability.parquet").exists()


def test_publish_without_a_token_says_so_before_any_request(labelled_project, runner, hub):
    assert invoke(runner, "build", "--version", "1.0.0").exit_code == 0
    for args in (("publish", "--version", "1.0.0"), ("publish", "--version", "1.0.0", "--dry-run")):
        result = run_cli(labelled_project, hub, *args, token=None)
        assert result.returncode == 2 and "no token: set HF_TOKEN or run `hf auth login`" in result.stderr
    assert hub.state.requests == []
    # The dry run checks what the real run checks: a wrong token is refused there too.
    wrong = run_cli(labelled_project, hub, "publish", "--version", "1.0.0", "--dry-run", token="hf_wrong_token_value")
    assert wrong.returncode == 2 and "refused the token (401)" in wrong.stderr and "hf_wrong" not in wrong.stderr


def test_the_test_hub_answers_where_the_client_branches(hub, tmp_path, monkeypatch):
    """Error codes, remote hashes (unchanged files are skipped) and the card's configs check."""
    from huggingface_hub.errors import (
        EntryNotFoundError,
        HfHubHTTPError,
        RepositoryNotFoundError,
        RevisionNotFoundError,
    )

    api = hub_api(hub, monkeypatch)
    with pytest.raises(RepositoryNotFoundError):
        api.list_repo_refs("nobody/nothing", repo_type="dataset")
    api.create_repo("test-org/h", repo_type="dataset")
    with pytest.raises(RevisionNotFoundError):
        api.list_repo_files("test-org/h", repo_type="dataset", revision="v9.9.9")
    with pytest.raises(EntryNotFoundError):
        api.hf_hub_download("test-org/h", "missing.txt", repo_type="dataset", cache_dir=tmp_path / "cache")
    folder = tmp_path / "upload"
    (folder / "data").mkdir(parents=True)
    (folder / "data" / "a.parquet").write_bytes(b"PAR1" + bytes(range(256)) * 40)
    (folder / "notes.txt").write_text("hello\n")
    first = api.upload_folder(repo_id="test-org/h", repo_type="dataset", folder_path=str(folder))
    repo = hub.state.repos[("dataset", "test-org/h")]
    commits = len(repo.commits)
    again = api.upload_folder(repo_id="test-org/h", repo_type="dataset", folder_path=str(folder))
    assert len(repo.commits) == commits and again.oid == first.oid  # nothing changed: no new commit
    card = "---\nconfigs:\n- config_name: all\n  data_files:\n  - split: test\n    path: data/none.parquet\n---\n# x\n"
    with pytest.raises(HfHubHTTPError) as refused:
        api.upload_file(
            path_or_fileobj=card.encode(), path_in_repo="README.md", repo_id="test-org/h", repo_type="dataset"
        )
    assert refused.value.response.status_code == 400 and "data/none.parquet" in str(refused.value)


def test_evaluate_names_what_is_missing_on_the_hub_and_reads_a_version_without_its_v(
    labelled_project, runner, hub, fixture_models
):
    assert invoke(runner, "build", "--version", "1.0.0").exit_code == 0
    assert run_cli(labelled_project, hub, "publish", "--version", "1.0.0").returncode == 0
    model = str(fixture_models["nli-a"])
    ok = run_cli(labelled_project, hub, "evaluate", "test-org/demo-bias@1.0.0", "--model", model, "--json", "s.json")
    assert ok.returncode == 0, ok.stderr[-2000:]
    assert json.loads((labelled_project / "s.json").read_text())["dataset"]["revision"] == "v1.0.0"
    cases = [
        ("test-org/demo-bias@v9.9.9", "revision v9.9.9 not found in test-org/demo-bias; its release tags: v1.0.0"),
        ("test-org/nothing@v1.0.0", "dataset repository test-org/nothing not found on the Hub"),
    ]
    for spec, message in cases:
        r = run_cli(labelled_project, hub, "evaluate", spec, "--model", model)
        assert r.returncode == 2 and message in r.stderr and "Traceback" not in r.stderr, r.stderr[-1500:]
    # A release already fetched is read from the local cache when the Hub is down; another is not.
    down = run_cli(
        labelled_project,
        hub,
        "evaluate",
        "test-org/demo-bias@v2.0.0",
        "--model",
        model,
        endpoint="http://127.0.0.1:9",
        token=None,
    )
    assert down.returncode == 2 and "cannot reach the Hub at http://127.0.0.1:9" in down.stderr, down.stderr[-1500:]
    pulled = run_cli(labelled_project, hub, "pull", "test-org/demo-bias@1.0.0", "--out", str(labelled_project / "p"))
    assert pulled.returncode == 0 and (labelled_project / "p" / "manifest.json").is_file()
    # --force replaces a local build, never a published one.
    forced = run_cli(labelled_project, hub, "build", "--version", "1.0.0", "--force")
    assert forced.returncode == 2 and "v1.0.0 is already published to test-org/demo-bias" in forced.stderr
    # With the local builds gone, the next version is compared with the newest release on the Hub.
    shutil.rmtree(labelled_project / "exports")
    items = pq.read_table(labelled_project / ".workbench" / "queue" / "data.parquet").to_pylist()
    write_labels(labelled_project / "more.jsonl", items[:4], lambda k: "invalid")
    assert (
        invoke(runner, "annotate", "-a", "alice", "--labels-from", str(labelled_project / "more.jsonl")).exit_code == 0
    )
    built = run_cli(labelled_project, hub, "build", "--version", "1.1.0")
    assert built.returncode == 0, built.stderr[-2000:]
    log = (labelled_project / "exports" / "demo-bias" / "1.1.0" / "CHANGELOG.md").read_text()
    assert "Compared with 1.0.0 (test-org/demo-bias@v1.0.0)" in log and "## 1.0.0" in log
    neither = labelled_project / "empty-folder"
    neither.mkdir()
    r = invoke(runner, "evaluate", str(neither), "--model", model)
    assert r.exit_code == 2 and "is neither a release (manifest.json and data/) nor a folder of templates" in str(
        r.exception
    )
