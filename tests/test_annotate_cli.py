"""`workbench annotate --labels-from` and `workbench annotations stats` on the real pipeline."""

from __future__ import annotations

import json
import shutil

import pytest

from conftest import ROOT, invoke


@pytest.fixture
def filtered_project(tmp_path, fixture_models, monkeypatch):
    shutil.copytree(ROOT / "templates", tmp_path / "templates")
    (tmp_path / "workbench.toml").write_text(
        f'[generate]\nmodel = "{fixture_models["mlm-bert"]}"\ntop_k = 5\n'
        f'[filter]\nmodels = ["{fixture_models["nli-a"]}", "{fixture_models["nli-c"]}"]\n'
        '[evaluate]\nmodels = []\n[annotation]\npolicy = "majority"\nmin_votes = 2\n'
    )
    monkeypatch.chdir(tmp_path)
    from typer.testing import CliRunner

    runner = CliRunner()
    for step in (["expand"], ["generate"], ["filter"]):
        result = invoke(runner, *step)
        assert result.exit_code == 0, result.output
    return tmp_path


def _queue(project):
    import pyarrow.parquet as pq

    return pq.read_table(project / ".workbench" / "queue" / "data.parquet").to_pylist()


def test_labels_from_file_then_stats_with_agreement(filtered_project, runner):
    assert invoke(runner, "run").exit_code == 0  # the queue is the last machine stage
    items = _queue(filtered_project)
    assert items and len({i["item_id"] for i in items}) == len(items)
    cats = ["valid-pro", "valid-anti", "invalid", "incoherent"]
    alice = [{"item_id": i["item_id"], "label": cats[k % 4]} for k, i in enumerate(items)]
    bob = [{"item_id": i["item_id"], "label": cats[k % 4] if k % 5 else "invalid"} for k, i in enumerate(items)]
    for name, rows in (("alice", alice), ("bob", bob)):
        path = filtered_project / f"{name}.jsonl"
        path.write_text("".join(json.dumps(r) + "\n" for r in rows))
        result = invoke(runner, "annotate", "--annotator", name, "--labels-from", str(path))
        assert result.exit_code == 0, result.output
        assert f"{len(items)}/{len(items)} items labelled" in result.output
    again = invoke(runner, "annotate", "--annotator", "alice", "--labels-from", str(filtered_project / "alice.jsonl"))
    assert "0 label(s) written" in again.output  # idempotent
    out = filtered_project / "stats.json"
    result = invoke(runner, "annotations", "stats", "--json", str(out))
    assert result.exit_code == 0, result.output
    summary = json.loads(out.read_text())
    total = summary["breakdown"][-1]
    disagree = sum(1 for k in range(len(items)) if k % 5 == 0 and cats[k % 4] != "invalid")
    assert total["items"] == len(items) and total["disagreement"] == disagree
    assert total["valid-pro"] + total["valid-anti"] + total["invalid"] + total["incoherent"] == len(items) - disagree
    pair = summary["agreement"]["pairs"][0]
    assert pair["items"] == len(items) and pair["agreement"] == pytest.approx(1 - disagree / len(items))
    assert "Cohen's kappa" in result.output and "Krippendorff" in result.output


def test_label_file_errors_name_the_line_and_write_nothing(filtered_project, runner):
    assert invoke(runner, "run").exit_code == 0
    item = _queue(filtered_project)[0]["item_id"]
    path = filtered_project / "bad.jsonl"
    path.write_text(
        json.dumps({"item_id": item, "label": "valid", "stance": "pro"})
        + "\n"
        + json.dumps({"item_id": "nope", "label": "invalid"})
        + "\n"
        + json.dumps({"item_id": item, "label": "valid"})
        + "\n"
    )
    result = invoke(runner, "annotate", "--annotator", "carol", "--labels-from", str(path))
    assert result.exit_code == 2
    message = str(result.exception)
    assert "bad.jsonl:2: item_id 'nope' is not in the annotation queue" in message
    assert "bad.jsonl:3: a valid label needs stance pro or anti" in message
    assert not (filtered_project / "annotations" / "carol.jsonl").exists()


def _snapshot(folder):
    return {str(p.relative_to(folder)): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}


def test_reads_leave_the_workspace_byte_identical(filtered_project, runner):
    """`annotations stats`, `status` and `stats` are reads: before the queue exists (stats then
    computes it in memory) and after labels changed, nothing in the workspace is written."""
    ws = filtered_project / ".workbench"
    before = _snapshot(ws)
    assert not (ws / "queue").exists()
    for command in (["annotations", "stats"], ["status"], ["stats"]):
        result = invoke(runner, *command)
        assert result.exit_code == 0, result.output
    assert _snapshot(ws) == before
    stats = invoke(runner, "annotations", "stats")
    assert "unlabelled" in stats.output and "total" in stats.output  # the in-memory queue was summarised
    assert invoke(runner, "run").exit_code == 0
    items = _queue(filtered_project)
    (filtered_project / "l.jsonl").write_text(json.dumps({"item_id": items[0]["item_id"], "label": "invalid"}) + "\n")
    assert invoke(runner, "annotate", "-a", "carol", "--labels-from", str(filtered_project / "l.jsonl")).exit_code == 0
    before = _snapshot(ws)
    for command in (["annotations", "stats"], ["status"], ["stats"]):
        assert invoke(runner, *command).exit_code == 0
    assert _snapshot(ws) == before
