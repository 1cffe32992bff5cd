"""Data-parallel runs under torchrun on CPU (gloo): the same outputs as one process, and a
rank that dies fails the run without hanging; the rerun resumes from what rank 0 committed to
the cache; with --max-restarts, torchrun's elastic restart does the same by itself."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
from pathlib import Path

import pyarrow.parquet as pq
import pytest
from conftest import ROOT

pytestmark = pytest.mark.timeout(900)

# Makes rank 1 die in its second round of batches, as a crashed or killed process would
# (batching imports all_gather by name: the name is replaced there and in distributed). It dies
# just after the round's exchange: rank 0 has committed the first round by then (it commits a
# round before computing the next), so what a rerun finds cached does not hang on timing; dying
# before the exchange let a slow rank 0 be killed before its first commit on a loaded machine.
CRASH = """
import os, sys
from workbench.core import distributed
from workbench.models import batching

real_gather = distributed.all_gather
rounds = {"n": 0}

def gather(obj):
    rounds["n"] += 1
    found = real_gather(obj)
    if distributed.rank() == 1 and rounds["n"] == 2 and ONLY_FIRST_ATTEMPT:
        os._exit(13)
    return found

distributed.all_gather = batching.all_gather = gather
from workbench.cli.main import main
sys.argv = ["workbench", *sys.argv[1:]]
main()
"""
CRASH_ALWAYS = CRASH.replace("ONLY_FIRST_ATTEMPT", "True")
# ... only in torchrun's first attempt: the restarted worker group runs normally.
CRASH_ONCE = CRASH.replace("ONLY_FIRST_ATTEMPT", 'os.environ["TORCHELASTIC_RESTART_COUNT"] == "0"')


def env() -> dict:
    e = {
        **os.environ,
        "WORKBENCH_PROGRESS": "0",
        "HF_HUB_OFFLINE": "1",
        "WORKBENCH_DIST_TIMEOUT": "60",
        "OMP_NUM_THREADS": "1",
        "PYTHONPATH": str(ROOT),
    }
    e.pop("WORLD_SIZE", None)
    return e


def single(folder: Path, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "workbench", *args], cwd=folder, env=env(), capture_output=True, text=True, timeout=600
    )


def torchrun(
    folder: Path, *args: str, script: Path | None = None, restarts: int = 0, timeout: float = 600
) -> subprocess.CompletedProcess:
    """torchrun on 2 processes, in a session of its own: past `timeout` the agent and its
    workers are all killed (a plain subprocess timeout would kill the agent alone)."""
    launcher = [
        sys.executable,
        "-m",
        "torch.distributed.run",
        "--standalone",
        "--nproc_per_node",
        "2",
        "--max-restarts",
        str(restarts),
    ]
    target = [str(script)] if script else ["-m", "workbench"]
    cmd = [*launcher, *target, *args]
    with subprocess.Popen(
        cmd, cwd=folder, env=env(), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True
    ) as proc:
        try:
            out, err = proc.communicate(timeout=timeout)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            out, err = proc.communicate()
            pytest.fail(f"torchrun did not finish within {timeout} s:\n{err[-3000:]}")
    return subprocess.CompletedProcess(cmd, proc.returncode, out, err)


@pytest.fixture
def projects(tmp_path, fixture_models):
    """Two identical projects (templates and config), each with its own workspace and cache: two
    of the example's subtopics, enough batches for both ranks and a crash between them."""
    made = []
    for name in ("one", "two"):
        folder = tmp_path / name
        for subtopic in ("age/work.yaml", "gender/caregiving.yaml"):
            (folder / "templates" / subtopic).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy(ROOT / "templates" / subtopic, folder / "templates" / subtopic)
        (folder / "workbench.toml").write_text(
            f'[generate]\nmodel = "{fixture_models["mlm-bert"]}"\ntop_k = 5\n'
            f'[filter]\nmodels = ["{fixture_models["nli-a"]}", "{fixture_models["nli-c"]}"]\nbatch_size = 16\n'
        )
        made.append(folder)
    return made


def tables(folder: Path, stages=("expand", "generate", "filter")) -> dict:
    out = {}
    for stage in stages:
        manifest = json.loads((folder / ".workbench" / stage / "manifest.json").read_text())
        manifest = {k: v for k, v in manifest.items() if k not in ("created", "seconds")}
        out[stage] = (pq.read_table(folder / ".workbench" / stage / "data.parquet").to_pylist(), manifest)
    return out


def same_up_to_batching(resumed: dict, fresh: dict) -> None:
    """After a resume the missing inputs form other batches than in a fresh run, and padding
    changes the last float digits (a single process resuming does the same): labels are equal,
    probabilities within 1e-5, and the manifests equal apart from what was computed now."""
    for stage in fresh:
        rows_a, manifest_a = resumed[stage]
        rows_b, manifest_b = fresh[stage]
        assert len(rows_a) == len(rows_b)
        for a, b in zip(rows_a, rows_b):
            for pa_, pb in zip(a.get("predictions") or [], b.get("predictions") or []):
                assert pa_["label"] == pb["label"]
                assert all(abs(pa_["probs"][k] - pb["probs"][k]) < 1e-5 for k in pb["probs"])
            assert {k: v for k, v in a.items() if k != "predictions"} == {
                k: v for k, v in b.items() if k != "predictions"
            }
        counts = lambda m: {k: v for k, v in m["counts"].items() if k != "computed_pairs"}  # noqa: E731
        assert counts(manifest_a) == counts(manifest_b)
        assert {k: v for k, v in manifest_a.items() if k not in ("counts", "data_sha256")} == {
            k: v for k, v in manifest_b.items() if k not in ("counts", "data_sha256")
        }


def test_two_processes_write_what_one_process_writes(projects):
    one, two = projects
    assert single(one, "filter").returncode == 0
    run = torchrun(two, "filter")
    assert run.returncode == 0, run.stderr[-3000:]
    assert run.stdout.count("filter:") == 1  # rank 1 prints nothing
    assert tables(two) == tables(one)


def test_an_intrinsic_evaluation_is_the_same_on_two_processes(tmp_path, fixture_models):
    from workbench.kinds.crows_pairs.example import write_example

    data = write_example(tmp_path)
    model = str(fixture_models["mlm-bert"])
    assert (
        single(tmp_path, "evaluate", str(data), "--model", model, "--json", "one.json", "--cache", "c1").returncode == 0
    )
    run = torchrun(tmp_path, "evaluate", str(data), "--model", model, "--json", "two.json", "--cache", "c2")
    assert run.returncode == 0, run.stderr[-3000:]
    one, two = (json.loads((tmp_path / f).read_text()) for f in ("one.json", "two.json"))
    assert one["models"] == two["models"] and one["models"]


def test_a_rank_that_dies_fails_the_run_and_the_rerun_resumes(projects, tmp_path):
    one, two = projects
    assert single(one, "generate").returncode == 0 and single(two, "generate").returncode == 0
    script = tmp_path / "crash.py"
    script.write_text(CRASH_ALWAYS)
    crashed = torchrun(two, "filter", script=script)
    assert crashed.returncode != 0
    assert "exitcode  : 13" in crashed.stderr or "exit code 13" in crashed.stderr.lower(), crashed.stderr[-3000:]
    assert not (two / ".workbench" / "filter" / "manifest.json").exists()  # no half-written table
    rerun = torchrun(two, "filter")
    assert rerun.returncode == 0, rerun.stderr[-3000:]
    computed = json.loads((two / ".workbench" / "filter" / "manifest.json").read_text())["counts"]
    assert single(one, "filter").returncode == 0
    same_up_to_batching(tables(two), tables(one))
    # What rank 0 committed before the crash was not computed again.
    assert 0 < sum(computed["computed_pairs"].values()) < 2 * computed["unique_pairs"], computed


def test_an_elastic_restart_after_a_crash_completes_the_run(projects, tmp_path):
    """torchrun --max-restarts 1: rank 1 dies in the first attempt; the restarted worker group
    resumes from what rank 0 committed and writes what one process writes. (torchrun keeps one
    store across restarts; distributed._group() must not read the dead attempt's addresses.)"""
    one, two = projects
    assert single(one, "generate").returncode == 0
    shutil.copytree(one / ".workbench", two / ".workbench")  # the same generate output and cache
    script = tmp_path / "crash_once.py"
    script.write_text(CRASH_ONCE)
    run = torchrun(two, "filter", script=script, restarts=1, timeout=600)  # a loaded 2-core machine is slow
    assert run.returncode == 0, run.stderr[-3000:]
    assert "(exitcode: 13) local_rank: 1" in run.stderr, run.stderr[-3000:]  # it did crash, then restart
    assert run.stdout.count("filter:") == 1
    assert single(one, "filter").returncode == 0
    same_up_to_batching(tables(two), tables(one))
    # The restarted group computed only what the first attempt had not committed.
    computed = json.loads((two / ".workbench" / "filter" / "manifest.json").read_text())["counts"]
    assert 0 < sum(computed["computed_pairs"].values()) < 2 * computed["unique_pairs"], computed


def test_each_rank_computes_every_nth_batch_and_halves_its_own_on_out_of_memory(monkeypatch):
    """In-process, as rank 0 of 2 (the other rank's results faked): rank 0 computes batches 0, 2,
    4 … of the length-sorted order; an out-of-memory error halves only its own batches; every
    batch reaches on_batch in batch order."""
    from workbench.models import batching

    monkeypatch.setenv("WORLD_SIZE", "2")
    monkeypatch.setenv("RANK", "0")
    other = {}

    def fake_gather(mine):
        # The other rank computes its batch of the round: the batch after rank 0's.
        first = mine[0][0][0] if mine else None
        theirs = other.pop(first, [])
        return [mine, theirs]

    monkeypatch.setattr(batching, "all_gather", fake_gather)  # batching imports it by name
    lengths = list(range(40))  # sorted order = 0..39; batches of 8: 5 batches
    batches = [list(range(b, b + 8)) for b in range(0, 40, 8)]
    for round_start in range(0, 5, 2):
        if round_start + 1 < 5:
            other[batches[round_start][0]] = [(batches[round_start + 1], "theirs")]
    computed, seen = [], []

    def step(indices):
        if len(indices) > 4:
            raise RuntimeError("CUDA out of memory")
        computed.append(list(indices))
        return "mine"

    final = batching.run_batched(lengths, 8, step, lambda idx, result: seen.append((list(idx), result)))
    assert final == 4
    assert computed == [batches[0][:4], batches[0][4:], batches[2][:4], batches[2][4:], batches[4][:4], batches[4][4:]]
    assert [i for idx, _ in seen for i in idx] == list(range(40))  # every item once, in order
    assert [r for _, r in seen].count("theirs") == 2
