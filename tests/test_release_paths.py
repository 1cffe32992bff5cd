"""A release folder is trusted only as far as its manifest goes (issue 47): `workbench evaluate`
and a release's own evaluate.py refuse a manifest naming a file outside the folder (`..`, an
absolute path, a link leading out), before any model loads; `workbench publish` uploads exactly
the files the manifest lists and refuses a folder holding anything else or a link.

Each bad release is a copy of a real build with one thing changed, made so that without the
check it would be scored (the outside file's hash is the one the manifest lists)."""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from support.hub_server import HubServer
from test_standalone_evaluator import run_standalone
from test_standalone_lm_kinds import build_release

KIND = "crows-pairs"
MODEL = "mlm-bert"
DATA = "data/pairs.csv"
REPO = "test-org/paths"
TOKEN = "hf_test_Paths47xQ2wLmN4"


def sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def edit_manifest(release: Path, change) -> None:
    manifest = json.loads((release / "manifest.json").read_text(encoding="utf-8"))
    change(manifest["files"])
    (release / "manifest.json").write_text(json.dumps(manifest, indent=2), encoding="utf-8")


def lists_dotdot(release: Path, outside: Path) -> str:
    """The manifest lists ../outside.txt, a file beside the release folder."""
    edit_manifest(release, lambda files: files.update({"../outside.txt": sha256(outside)}))
    return "../outside.txt"


def lists_dotdot_under_data(release: Path, outside: Path) -> str:
    """data/../../outside.txt: a data file by its first component (what evaluate.py hashes)."""
    edit_manifest(release, lambda files: files.update({"data/../../outside.txt": sha256(outside)}))
    return "data/../../outside.txt"


def lists_absolute(release: Path, outside: Path) -> str:
    edit_manifest(release, lambda files: files.update({str(outside): sha256(outside)}))
    return str(outside)


def data_file_links_out(release: Path, outside: Path) -> str:
    """The data file the kind scores is a link to an identical file outside the folder."""
    away = outside.parent / "pairs-elsewhere.csv"
    shutil.move(release / DATA, away)
    (release / DATA).symlink_to(away)
    return DATA


def data_folder_links_out(release: Path, outside: Path) -> str:
    """data/ itself is a link to an identical folder outside."""
    away = outside.parent / "data-elsewhere"
    shutil.move(release / "data", away)
    (release / "data").symlink_to(away, target_is_directory=True)
    return DATA


def manifest_links_out(release: Path, outside: Path) -> str:
    """manifest.json is a link to a manifest kept outside the folder."""
    away = outside.parent / "manifest-elsewhere.json"
    shutil.move(release / "manifest.json", away)
    (release / "manifest.json").symlink_to(away)
    return "manifest.json"


BAD = [
    lists_dotdot,
    lists_dotdot_under_data,
    lists_absolute,
    data_file_links_out,
    data_folder_links_out,
    manifest_links_out,
]


def bad_release(releases, tmp_path: Path, make) -> tuple[Path, str]:
    """(a copy of the kind's release made bad by `make`, the path the refusal must name)."""
    release = tmp_path / "release"
    shutil.copytree(releases(KIND), release)
    outside = tmp_path / "outside.txt"
    outside.write_text("not part of the release\n", encoding="utf-8")
    return release, make(release, outside)


def one_line_refusal(stderr: str, *named: str) -> str:
    lines = stderr.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in stderr, stderr
    assert all(n in lines[0] for n in named), lines[0]
    return lines[0]


def workbench(*args: str, cwd: Path, env: dict | None = None) -> subprocess.CompletedProcess:
    base = {**os.environ, "HF_HUB_OFFLINE": "1", "WORKBENCH_PROGRESS": "0", "HF_HOME": str(cwd / ".hf-home")}
    return subprocess.run(
        [sys.executable, "-m", "workbench", *args],
        cwd=cwd,
        env={**base, **(env or {})},
        capture_output=True,
        text=True,
        timeout=300,
    )


@pytest.mark.parametrize("make", BAD, ids=lambda f: f.__name__)
def test_evaluating_a_release_whose_manifest_names_a_file_outside_it_is_refused_unscored(
    make, releases, fixture_models, tmp_path
):
    release, named = bad_release(releases, tmp_path, make)
    ran = workbench(
        "evaluate",
        "release",
        "--model",
        str(fixture_models[MODEL]),
        "--json",
        "scores.json",
        "--cache",
        str(tmp_path / "cache.sqlite"),
        cwd=tmp_path,
    )
    assert ran.returncode == 2, ran.stdout + ran.stderr
    line = one_line_refusal(ran.stderr, "release/manifest.json", named)
    assert "outside its release folder" in line
    assert not (tmp_path / "scores.json").exists() and not (tmp_path / "cache.sqlite").exists()


@pytest.mark.parametrize("make", BAD, ids=lambda f: f.__name__)
def test_a_releases_own_evaluate_py_refuses_the_same_manifests(make, releases, fixture_models, tmp_path):
    release, named = bad_release(releases, tmp_path, make)
    ran = run_standalone(
        release / "evaluate.py", ["--model", str(fixture_models[MODEL]), "--json", "scores.json"], cwd=tmp_path
    )
    assert ran.returncode == 2, ran.stdout + ran.stderr
    line = one_line_refusal(ran.stderr, "evaluate.py: error:", "manifest.json", named)
    assert "outside its release folder" in line
    assert not (tmp_path / "scores.json").exists()


def test_a_hub_cache_shaped_folder_may_link_into_its_blobs_only(releases, fixture_models, tmp_path):
    """A downloaded revision's files are links into the cache's blobs/ (accepted); one leading
    anywhere else is refused like any link."""
    snapshot = tmp_path / "datasets--test-org--paths" / "snapshots" / "0123abc"
    blobs = tmp_path / "datasets--test-org--paths" / "blobs"
    blobs.mkdir(parents=True)
    shutil.copytree(releases(KIND), snapshot)
    for path in sorted(p for p in snapshot.rglob("*") if p.is_file()):
        blob = blobs / sha256(path)
        shutil.move(path, blob)
        path.symlink_to(os.path.relpath(blob, path.parent))
    model = str(fixture_models[MODEL])
    scored = workbench("evaluate", str(snapshot), "--model", model, "--json", "ok.json", cwd=tmp_path)
    assert scored.returncode == 0, scored.stderr[-2000:]
    away = tmp_path / "pairs-elsewhere.csv"
    shutil.copy(snapshot / DATA, away)
    (snapshot / DATA).unlink()
    (snapshot / DATA).symlink_to(away)
    refused = workbench("evaluate", str(snapshot), "--model", model, "--json", "bad.json", cwd=tmp_path)
    assert refused.returncode == 2
    one_line_refusal(refused.stderr, DATA, "a symbolic link leading outside the release folder")
    assert not (tmp_path / "bad.json").exists()


# --- publish -------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def published_build(tmp_path_factory) -> Path:
    """A project of the kind built as 1.0.0 for the test Hub's repository REPO (its release
    folder is project/exports/<name>/1.0.0); tests publish copies of it."""
    return build_release(KIND, tmp_path_factory.mktemp("paths"), repo=REPO)


@pytest.fixture
def built_project(published_build, tmp_path) -> tuple[Path, Path]:
    """(a copy of the built project, its release folder)."""
    project = tmp_path / "project"
    shutil.copytree(published_build.parents[2], project, symlinks=True)
    return project, project / published_build.relative_to(published_build.parents[2])


@pytest.fixture
def hub():
    server = HubServer(tokens={TOKEN}).start()
    yield server
    server.stop()


def publish(project: Path, hub, *args: str) -> subprocess.CompletedProcess:
    env = {
        "HF_ENDPOINT": hub.url,
        "HF_TOKEN": TOKEN,
        "HF_HUB_DISABLE_TELEMETRY": "1",
        "HF_HUB_DISABLE_XET": "1",
        "HF_HUB_OFFLINE": "0",
    }
    return workbench("publish", "--version", "1.0.0", *args, cwd=project, env=env)


def listed(release: Path) -> dict[str, str]:
    return json.loads((release / "manifest.json").read_text(encoding="utf-8"))["files"]


def test_publishing_a_clean_release_uploads_exactly_the_manifests_files(built_project, hub):
    project, release = built_project
    done = publish(project, hub)
    assert done.returncode == 0, done.stderr[-2000:]
    repo = hub.state.repos[("dataset", REPO)]
    files = repo.commits[repo.tags["v1.0.0"]].files
    # The test Hub's new repository starts with its .gitattributes; everything else is the release's.
    assert set(files) - {".gitattributes"} == set(listed(release)) | {"manifest.json"}
    assert all(hashlib.sha256(files[name]).hexdigest() == digest for name, digest in listed(release).items())
    assert files["manifest.json"] == (release / "manifest.json").read_bytes()


def stray_env(release: Path, outside: Path) -> list[str]:
    (release / ".env").write_text("HF_TOKEN=hf_not_for_the_hub\n", encoding="utf-8")
    return [".env"]


def links_in_the_folder(release: Path, outside: Path) -> list[str]:
    """A link to a file outside and a link to a folder outside, neither listed."""
    (release / "data" / "extra.csv").symlink_to(outside)
    (release / "notes").symlink_to(outside.parent, target_is_directory=True)
    return ["data/extra.csv (a symbolic link)", "notes (a symbolic link)"]


def listed_file_is_a_link(release: Path, outside: Path) -> list[str]:
    """A listed file replaced by a link to an identical file outside (its hash still matches)."""
    away = outside.parent / "pairs-elsewhere.csv"
    shutil.move(release / DATA, away)
    (release / DATA).symlink_to(away)
    return [DATA, "a symbolic link leading outside the release folder"]


def listed_file_changed(release: Path, outside: Path) -> list[str]:
    with open(release / DATA, "a", encoding="utf-8") as f:
        f.write("one more line\n")
    return [DATA, "do(es) not match the release manifest"]


@pytest.mark.parametrize(
    "make", [stray_env, links_in_the_folder, listed_file_is_a_link, listed_file_changed], ids=lambda f: f.__name__
)
@pytest.mark.parametrize("dry_run", [False, True], ids=["publish", "dry-run"])
def test_publishing_a_folder_that_is_not_what_its_manifest_lists_is_refused_and_uploads_nothing(
    make, dry_run, built_project, hub
):
    project, release = built_project
    outside = project.parent / "outside.txt"
    outside.write_text("not part of the release\n", encoding="utf-8")
    named = make(release, outside)
    refused = publish(project, hub, *(["--dry-run"] if dry_run else []))
    assert refused.returncode == 2, refused.stdout + refused.stderr
    one_line_refusal(refused.stderr, *named)
    assert "nothing was uploaded" in refused.stderr or "nothing was scored or uploaded" in refused.stderr
    assert hub.state.repos == {} and hub.state.requests == []  # refused before the Hub was asked anything


# --- no path of the maintainer's machine in a release (issue 55) ----------------------------


def cells(value):
    """Every string in a Parquet cell (structs and lists opened)."""
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for v in value.values():
            yield from cells(v)
    elif isinstance(value, (list, tuple)):
        for v in value:
            yield from cells(v)


@pytest.fixture(scope="module")
def local_models_project(tmp_path_factory, fixture_models) -> Path:
    """The NLI example project, labelled, whose generation model and two filter models are named by
    absolute folders of this machine; the filter models share their folder's name
    (runA/checkpoint-500, runB/checkpoint-500), as two runs' checkpoints do."""
    from conftest import ROOT

    root = tmp_path_factory.mktemp("local_models")
    project = root / "project"
    shutil.copytree(ROOT / "templates", project / "templates")
    filters = [root / "runs" / "runA" / "checkpoint-500", root / "runs" / "runB" / "checkpoint-500"]
    for folder, name in zip(filters, ("nli-a", "nli-c")):
        shutil.copytree(fixture_models[name], folder)
    (project / "workbench.toml").write_text(
        '[project]\nname = "local-models"\nlicense = "cc-by-4.0"\n'
        f'[generate]\nmodel = "{fixture_models["mlm-bert"]}"\ntop_k = 5\n'
        f'[filter]\nmodels = ["{filters[0]}", "{filters[1]}"]\n[evaluate]\nmodels = []\n',
        encoding="utf-8",
    )
    assert workbench("run", cwd=project).returncode == 0
    import pyarrow.parquet as pq

    items = pq.read_table(project / ".workbench" / "queue" / "data.parquet").to_pylist()
    (project / "labels.jsonl").write_text(
        "".join(json.dumps({"item_id": i["item_id"], "label": "valid-pro"}) + "\n" for i in items), encoding="utf-8"
    )
    labelled = workbench("annotate", "-a", "alice", "--labels-from", "labels.jsonl", cwd=project)
    assert labelled.returncode == 0, labelled.stderr
    return project


def test_a_release_names_models_given_as_local_folders_as_its_card_does_never_by_their_path(
    local_models_project, fixture_models, tmp_path
):
    project = tmp_path / "project"
    shutil.copytree(local_models_project, project)
    built = workbench("build", "--version", "1.0.0", cwd=project)
    assert built.returncode == 0, built.stderr
    release = project / "exports" / "local-models" / "1.0.0"
    import pyarrow.parquet as pq

    machine = (str(local_models_project.parent), str(fixture_models["mlm-bert"].parent), str(tmp_path))
    fooled = set()
    for data in sorted((release / "data").glob("*.parquet")):
        table = pq.read_table(data)
        for row in table.to_pylist():
            leaked = [s for s in cells(row) if any(m in s for m in machine)]
            assert not leaked, (data.name, leaked)
            fooled.update(json.loads(row["provenance"])["fooled_by"])
            assert json.loads(row["provenance"])["mlm"] == "mlm-bert (a local folder)"
    # named as the card names them, the two same-named checkpoints told apart
    assert fooled and fooled <= {"runA/checkpoint-500 (a local folder)", "runB/checkpoint-500 (a local folder)"}
    card = (release / "README.md").read_text(encoding="utf-8")
    assert all(f"`{name}`" in card for name in fooled)


def leaves_nothing(project: Path) -> None:
    exports = project / "exports"
    assert not (exports / "local-models" / "1.0.0").exists()
    assert not [p.name for p in exports.iterdir() if p.name.startswith(".build-")] if exports.exists() else True


@pytest.mark.parametrize("where", ["project", "home", "model", "elsewhere"])
def test_a_build_whose_files_would_name_a_path_of_this_machine_is_refused_whole(where, local_models_project, tmp_path):
    """The maintainer's release notes (card and changelog) name a folder of this machine: the
    project's, the home folder, a filter model's, or any other folder that exists here."""
    project = tmp_path / "project"
    shutil.copytree(local_models_project, project)
    from conftest import ROOT

    named = {
        "project": f"{project}/notes/draft.md",
        "home": f"{Path.home()}/Desktop/draft.md",
        "model": str(local_models_project.parent / "runs" / "runA" / "checkpoint-500"),
        "elsewhere": f"{ROOT}/docs/draft.md",  # a folder that exists here, named nowhere else
    }[where]
    (project / "notes.md").write_text(f"Drafted from {named} and checked by hand.\n", encoding="utf-8")
    refused = workbench("build", "--version", "1.0.0", "--notes", "notes.md", cwd=project)
    assert refused.returncode == 2, refused.stdout + refused.stderr
    one_line_refusal(
        refused.stderr, "CHANGELOG.md: line", f"names {named}, a path of this machine", "nothing was built"
    )
    leaves_nothing(project)


def test_every_file_the_build_writes_is_read_parquet_cells_and_json_fields_named(tmp_path, monkeypatch):
    """The check itself, on files of each kind a build writes: the refusal names the file, the
    column or field (inside structs, lists and JSON text) and the row or line."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    from workbench.core.config import load_config
    from workbench.core.errors import InputError
    from workbench.release.local_paths import refuse_machine_paths

    project = tmp_path / "project"
    project.mkdir()
    (project / "workbench.toml").write_text('[project]\nname = "p"\n', encoding="utf-8")
    monkeypatch.chdir(project)
    config = load_config(project / "workbench.toml")
    folder = tmp_path / "release"
    (folder / "data").mkdir(parents=True)
    clean = [{"id": "a", "provenance": json.dumps({"fooled_by": ["nli-a (a local folder)"]}), "p": {"m": ["x"]}}]
    pq.write_table(pa.Table.from_pylist(clean), folder / "data" / "all.parquet")
    (folder / "README.md").write_text("See https://huggingface.co/datasets/org/name and /usr/bin/env.\n")
    refuse_machine_paths(folder, config)  # nothing of this machine: no refusal

    def refusal() -> str:
        with pytest.raises(InputError) as caught:
            refuse_machine_paths(folder, config)
        assert "\n" not in str(caught.value)
        return str(caught.value)

    leaked = [*clean, {"id": "b", "provenance": "{}", "p": {"m": ["x", f"{project}/models/nli"]}}]
    pq.write_table(pa.Table.from_pylist(leaked), folder / "data" / "all.parquet")
    assert refusal().startswith(f"data/all.parquet: column p.m[1], row 2 names {project}/models/nli,")
    in_json = [{"id": "c", "provenance": json.dumps({"fooled_by": ["ok", f"{tmp_path}/nli"]}), "p": {"m": []}}]
    pq.write_table(pa.Table.from_pylist(in_json), folder / "data" / "all.parquet")
    assert refusal().startswith("data/all.parquet: column provenance.fooled_by[1], row 1 names ")
    (folder / "data" / "all.parquet").unlink()
    (folder / "manifest.json").write_text(json.dumps({"config": {"filter": {"models": [str(Path.cwd())]}}}))
    assert refusal().startswith(f"manifest.json: field config.filter.models[0] names {Path.cwd()},")
    (folder / "manifest.json").unlink()
    (folder / "evaluate.py").write_text(f'"""Run me."""\nDATA = "{tempfile_dir()}/x.csv"\n')
    assert refusal().startswith("evaluate.py: line 2 names ")


def tempfile_dir() -> str:
    import tempfile

    return tempfile.gettempdir()


# --- a killed build's staging folder (issue 55) ---------------------------------------------

HOLD = """
import os, signal, sys
from pathlib import Path
from workbench.release.staging import staging_folder

with staging_folder(Path(sys.argv[1])) as staged:
    (staged / "data.parquet").write_bytes(b"half")
    print(staged.name, flush=True)
    if sys.argv[2] == "kill":
        os.kill(os.getpid(), signal.SIGKILL)  # killed mid-build: nothing of the block's end runs
    sys.stdin.readline()  # a build still running, until told to end
"""


def staging(exports: Path) -> set[str]:
    return {p.name for p in exports.iterdir() if p.name.startswith(".build-")}


def test_a_build_removes_the_staging_folders_of_killed_builds_and_keeps_those_of_running_ones(built_project):
    project, release = built_project
    exports = project / "exports"
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
    killed = subprocess.run([sys.executable, "-c", HOLD, str(exports), "kill"], capture_output=True, text=True, env=env)
    assert killed.returncode == -9 and (exports / killed.stdout.strip()).is_dir()
    (exports / ".build-k3j9x2ab").mkdir()  # what a killed build of f70768c leaves: no lock file
    (exports / ".build-k3j9x2ab" / "README.md").write_text("half\n", encoding="utf-8")
    running = subprocess.Popen(
        [sys.executable, "-c", HOLD, str(exports), "hold"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
        env=env,
    )
    try:
        alive = running.stdout.readline().strip()
        assert alive and alive in staging(exports)
        built = workbench("build", "--version", "1.0.1", "--force", cwd=project)
        assert built.returncode == 0, built.stderr
        assert staging(exports) == {alive, alive + ".lock"}  # the running one alone is kept
    finally:
        running.communicate("\n", timeout=60)
    assert running.returncode == 0 and staging(exports) == set()  # and it cleans up after itself
    assert (exports / release.parent.name / "1.0.1" / "manifest.json").is_file()


@pytest.mark.parametrize("model", ["http://127.0.0.1:9/v1#tiny", "HTTPS://models.example/v1", "vllm:org/model"])
def test_a_releases_evaluate_py_given_a_served_model_says_it_runs_checkpoints_only(model, releases, tmp_path):
    """Not transformers' "Repo id must be in the form ...": one line saying what to run instead (#55)."""
    release = tmp_path / "release"
    shutil.copytree(releases(KIND), release)
    ran = run_standalone(release / "evaluate.py", ["--model", model, "--json", "scores.json"], cwd=tmp_path)
    assert ran.returncode == 2, ran.stdout + ran.stderr
    one_line_refusal(
        ran.stderr,
        "evaluate.py: error:",
        f"--model {model}:",
        "local checkpoints and Hub models only",
        "workbench evaluate",
    )
    assert not (tmp_path / "scores.json").exists()
