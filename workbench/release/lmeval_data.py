"""The data of a workbench release, for lm-evaluation-harness.

Copied verbatim into a release's `lm_eval_tasks/` folder, where the task's YAML names it
(`custom_dataset: !function lmeval_data.load`); it needs lm-eval alone (its `datasets` and
`huggingface_hub`), never workbench. `load` reads the release's data file beside the folder
(`<release>/<data_file>`), checked against the release's manifest.json, or, for a copy of the
folder without the release around it, downloads that file from the Hub at the release's tag
(`dataset`: ORG/NAME@vX.Y.Z, written into the YAML by `workbench build`). A subtask's
`dataset_kwargs` keep the rows of one group: those whose `group_by` column is one of `groups`.
The file is Parquet, CSV (every column text) or JSON lines (each row as written: numbers stay
numbers, as a kind's evaluator reads them).
"""

import csv
import hashlib
import json
from pathlib import Path

RELEASE = Path(__file__).resolve().parent.parent


def _checked(path: Path, data_file: str) -> Path:
    """The local data file, refused when it is not the one the release's manifest lists."""
    manifest = RELEASE / "manifest.json"
    if manifest.is_file():
        expected = json.loads(manifest.read_text(encoding="utf-8")).get("files", {}).get(data_file)
        if expected is not None and hashlib.sha256(path.read_bytes()).hexdigest() != expected:
            raise ValueError(f"{path} differs from the file the release's manifest.json lists: re-download the release")
    return path


def load(data_file: str, dataset: str | None = None, group_by: str | None = None, groups=None, **_ignored):
    """{"test": the release's rows}, every column as written (text); with `group_by`, only the
    rows whose value in that column (as text) is one of `groups`."""
    import datasets

    local = RELEASE / data_file
    if local.is_file():
        path = _checked(local, data_file)
    elif dataset:
        from huggingface_hub import hf_hub_download

        repo, _, tag = dataset.partition("@")
        path = Path(hf_hub_download(repo, data_file, repo_type="dataset", revision=tag or None))
    else:
        raise FileNotFoundError(f"{local} is missing, and the release names no Hub tag to download it from")
    if data_file.endswith(".parquet"):
        rows = datasets.Dataset.from_parquet(str(path))
        if group_by:
            keep = {str(g) for g in groups or ()}
            rows = rows.filter(
                lambda row: ("" if row[group_by] is None else str(row[group_by])) in keep, keep_in_memory=True
            )
        return {"test": rows}
    rows = read_rows(path)
    if group_by:
        keep = {str(g) for g in groups or ()}
        rows = [row for row in rows if _text(row.get(group_by)) in keep]
    return {"test": datasets.Dataset.from_list(rows)}


def read_rows(path: Path) -> list[dict]:
    """The rows of a CSV or JSON-lines file (by its suffix), in file order."""
    with open(path, newline="", encoding="utf-8") as f:
        if path.suffix == ".jsonl":
            return [json.loads(line) for line in f if line.strip()]
        return list(csv.DictReader(f))


def _text(value) -> str:
    return "" if value is None else str(value)
