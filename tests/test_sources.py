"""Every source is checked before scoring: a release folder against its manifest (none: refused
unless --unverified, and then said in the output), every file decoded strictly, the kind read
from the manifest or the data's layout; input sizes are bounded. Each bad input ends with one
line naming the file, exit code 2 and no traceback, in `workbench` (run as a process) and in a
release's evaluate.py run where workbench cannot be imported."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
from test_standalone_evaluator import run_standalone

from workbench.release import standalone
from workbench import kinds


def workbench(cwd: Path, *args: str) -> subprocess.CompletedProcess:
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "WORKBENCH_PROGRESS": "0"}
    return subprocess.run(
        [sys.executable, "-m", "workbench", *args], cwd=cwd, env=env, capture_output=True, text=True, timeout=300
    )


def refused(ran: subprocess.CompletedProcess, *fragments: str) -> str:
    """The error line of a run that must have been refused: exit 2, no traceback, every fragment in it."""
    assert ran.returncode == 2, (ran.returncode, ran.stdout[-2000:], ran.stderr[-2000:])
    assert "Traceback" not in ran.stderr + ran.stdout
    errors = [line for line in ran.stderr.splitlines() if "error" in line]
    assert errors, ran.stderr
    for fragment in fragments:
        assert fragment in ran.stderr, (fragment, ran.stderr)
    return errors[-1]


def nli_folder(folder: Path) -> Path:
    """What is left of an NLI release: data/all.parquet (two counterfactual pairs), no manifest,
    and the release's own evaluate.py (with its evaluator/)."""
    rows = [
        {
            "premise": "A person cooked dinner.",
            "hypothesis": h,
            "stance": s,
            "domain": "gender",
            "subtopic": "cooking",
            "pair_id": p,
        }
        for h, s, p in (
            ("Women cook.", "pro", "p1"),
            ("Men cook.", "anti", "p1"),
            ("Girls bake.", "pro", "p2"),
            ("Boys bake.", "anti", "p2"),
        )
    ]
    (folder / "data").mkdir(parents=True)
    pq.write_table(pa.Table.from_pylist(rows), folder / "data" / "all.parquet")
    standalone.write(kinds.get("nli"), None, folder)
    return folder


def test_a_release_folder_without_manifest_is_refused_unless_unverified(fixture_models, tmp_path):
    folder = nli_folder(tmp_path / "loose")
    model = str(fixture_models["nli-a"])
    line = refused(
        workbench(tmp_path, "evaluate", "loose", "--model", model), "loose: no manifest.json", "--unverified"
    )
    assert line.startswith("error: loose:")
    ran = workbench(tmp_path, "evaluate", "loose", "--model", model, "--unverified", "--json", "s.json")
    assert ran.returncode == 0, ran.stderr[-2000:]
    assert "warning: loose: scored --unverified" in ran.stdout
    doc = json.loads((tmp_path / "s.json").read_text(encoding="utf-8"))
    assert doc["unverified"] == [
        "loose: scored --unverified: it has no manifest.json, so its files were not checked against a release"
    ]
    assert doc["models"][model]["overall"]["n"] == 4

    # the release's own script: refused as well (it would fetch its pinned tag; this one has none)
    ran = run_standalone(folder / "evaluate.py", ["--model", model], cwd=tmp_path)
    refused(ran, "has data/ but no manifest.json", "--unverified")
    ran = run_standalone(
        folder / "evaluate.py", ["--model", model, "--unverified", "--json", "alone.json"], cwd=tmp_path
    )
    assert ran.returncode == 0, ran.stderr[-2000:]
    assert "scored --unverified" in ran.stderr
    alone = json.loads((tmp_path / "alone.json").read_text(encoding="utf-8"))
    assert alone["unverified"] and alone["models"][model]["overall"] == doc["models"][model]["overall"]


def test_a_corrupt_parquet_file_is_named_not_a_pyarrow_traceback(fixture_models, tmp_path):
    folder = nli_folder(tmp_path / "loose")
    data = folder / "data" / "all.parquet"
    data.write_bytes(data.read_bytes()[:-40])
    model = str(fixture_models["nli-a"])
    line = refused(
        workbench(tmp_path, "evaluate", "loose", "--model", model, "--unverified"),
        "loose/data/all.parquet: the data file is not a readable Parquet file",
    )
    assert "download or build it again" in line
    ran = run_standalone(folder / "evaluate.py", ["--model", model, "--unverified"], cwd=tmp_path)
    refused(ran, "data/all.parquet: the data file is not a readable Parquet file")


def test_a_crows_pairs_folder_without_manifest_is_crows_pairs_not_nli(releases, fixture_models, tmp_path):
    folder = tmp_path / "crows"
    shutil.copytree(releases("crows-pairs"), folder)
    (folder / "manifest.json").unlink()
    model = str(fixture_models["mlm-bert"])
    ran = workbench(tmp_path, "evaluate", "crows", "--model", model, "--unverified", "--json", "s.json")
    assert ran.returncode == 0, ran.stderr[-2000:]
    doc = json.loads((tmp_path / "s.json").read_text(encoding="utf-8"))
    assert doc["kind"] == "crows-pairs" and doc["unverified"] and doc["models"][model]["overall"]["n"] > 0

    # the kind forced to another one: refused, the folder named
    refused(
        workbench(tmp_path, "evaluate", "crows", "--kind", "sofa", "--model", model, "--unverified"),
        "crows: no data file in it has the layout of a sofa release",
    )

    # a byte that is not UTF-8 in the data: named with its line, in workbench and in the script
    data = folder / "data" / "pairs.csv"
    lines = data.read_bytes().split(b"\n")
    lines[2] = lines[2].replace(b"e", b"\xe9", 1)
    data.write_bytes(b"\n".join(lines))
    refused(
        workbench(tmp_path, "evaluate", "crows", "--model", model, "--unverified"),
        "crows/data/pairs.csv:3: column",
        "is not UTF-8 (byte 0xe9)",
    )
    refused(
        run_standalone(folder / "evaluate.py", ["--model", model, "--unverified"], cwd=tmp_path),
        "data/pairs.csv:3: column",
        "is not UTF-8 (byte 0xe9)",
    )


def test_a_manifest_that_is_not_utf8_or_not_json_is_named(releases, fixture_models, tmp_path):
    folder = tmp_path / "crows"
    shutil.copytree(releases("crows-pairs"), folder)
    model = str(fixture_models["mlm-bert"])
    manifest = folder / "manifest.json"
    manifest.write_bytes(manifest.read_bytes().replace(b'"kind"', b'"k\xffind"', 1))
    refused(workbench(tmp_path, "evaluate", "crows", "--model", model), "crows/manifest.json is not a release manifest")
    refused(
        run_standalone(folder / "evaluate.py", ["--model", model], cwd=tmp_path),
        "manifest.json",
        "is not UTF-8 (byte 0xff)",
    )
    manifest.write_text("{not json", encoding="utf-8")
    refused(
        run_standalone(folder / "evaluate.py", ["--model", model], cwd=tmp_path),
        "manifest.json:1: column 2: the release manifest is not valid JSON",
    )


def test_a_file_no_kind_recognises_is_refused_not_taken_for_nli(fixture_models, tmp_path):
    (tmp_path / "notes.txt").write_text("premise,hypothesis\n", encoding="utf-8")
    refused(
        workbench(tmp_path, "evaluate", "notes.txt", "--model", str(fixture_models["nli-a"])),
        "notes.txt: no kind of benchmark recognises this file's layout; pass --kind",
    )
    nli_folder(tmp_path / "nli")
    (tmp_path / "pairs.csv").write_text(
        "sent_more,sent_less,stereo_antistereo,bias_type\na,b,stereo,x\n", encoding="utf-8"
    )
    refused(
        workbench(tmp_path, "evaluate", "pairs.csv", "nli", "--unverified", "--model", "m"),
        "the sources are of different kinds (pairs.csv: crows-pairs, nli: nli)",
    )


def test_a_workbench_toml_that_is_not_utf8_is_refused_not_decoded_with_replacements(tmp_path):
    (tmp_path / "workbench.toml").write_bytes(b'[project]\nname = "caf\xe9"\n')
    line = refused(workbench(tmp_path, "validate"), "workbench.toml:2: not UTF-8 (byte 0xe9 at column 12)")
    assert "\ufffd" not in line


def test_template_size_limits_are_quick_clear_refusals(project, tmp_path):
    """A line, a field and a file over the limits of core/text.py: named at once (an 8 MB line
    once took `validate` 19-57 s)."""
    from workbench.core.text import MAX_FIELD_CHARS, MAX_LINE_CHARS, MAX_TEMPLATE_BYTES

    text = (project / "templates" / "age" / "work.yaml").read_text(encoding="utf-8")
    huge = project / "templates" / "huge_line.yaml"
    huge.write_text(text + "# " + "x" * (8 << 20) + "\n", encoding="utf-8")
    started = time.perf_counter()
    ran = workbench(project, "validate")
    assert time.perf_counter() - started < 30
    line_no = text.count("\n") + 1
    refused(
        ran,
        f"huge_line.yaml:{line_no}: a line of {(8 << 20) + 2:,} characters, over the limit of "
        f"{MAX_LINE_CHARS:,} for a template line",
    )
    huge.unlink()

    lines = text.replace("id: age_work", "id: age_work_long").splitlines()
    at = next(i for i, line in enumerate(lines) if line.startswith("name:"))
    lines[at] = f"name: {'y' * (MAX_FIELD_CHARS + 1)}"
    (project / "templates" / "long_field.yaml").write_text("\n".join(lines) + "\n", encoding="utf-8")
    refused(
        workbench(project, "templates", "lint"),
        f"long_field.yaml:{at + 1}: name:",
        f"{MAX_FIELD_CHARS + 1:,} characters, over the limit of {MAX_FIELD_CHARS:,} for one field",
    )
    (project / "templates" / "long_field.yaml").unlink()

    big = project / "templates" / "big.yaml"
    with open(big, "w", encoding="utf-8") as f:
        f.write(text)
        f.write(("# padding\n" * 1000) * (MAX_TEMPLATE_BYTES // 10_000 + 1))
    refused(
        workbench(project, "validate"), "big.yaml:", f"over the limit of {MAX_TEMPLATE_BYTES:,} for a template file"
    )
