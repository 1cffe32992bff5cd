"""`workbench evaluate A B` for kinds that read one source at a time: each version alone, then
the kind's measures side by side (table, CSV/JSON, chart)."""

import json
from pathlib import Path

import pytest

from conftest import invoke
from workbench.evaluation.versions import Compared, side_by_side, version_tags


def test_side_by_side_pairs_rows_by_key_and_shows_what_a_version_lacks():
    compared = Compared(keys=("model", "group"), measures=("score", "n"))
    a = [
        {"model": "m", "group": "all", "score": 50.0, "n": 10},
        {"model": "m", "group": "age", "score": 40.0, "n": 4},
        {"model": "m", "group": "x", "score": None, "n": 0},
    ]
    b = [{"model": "m", "group": "all", "score": 55.5, "n": 9}, {"model": "m", "group": "race", "score": 60.0, "n": 3}]
    rows = side_by_side(["1.0.0", "1.1.0"], [a, b], compared)
    assert [(r["model"], r["group"]) for r in rows] == [("m", "all"), ("m", "age"), ("m", "race")]
    assert rows[0] == {
        "model": "m",
        "group": "all",
        "score 1.0.0": 50.0,
        "score 1.1.0": 55.5,
        "n 1.0.0": 10,
        "n 1.1.0": 9,
        "change score 1.0.0→1.1.0": 5.5,
    }
    assert rows[1]["score 1.1.0"] is None and rows[1]["change score 1.0.0→1.1.0"] is None
    assert rows[2]["score 1.0.0"] is None and rows[2]["n 1.1.0"] == 3


def test_a_kind_with_several_scores_shows_how_each_moved():
    compared = Compared(keys=("model",), measures=("ss", "lms", "n"), changed=("lms",))
    rows = side_by_side(
        ["a", "b"],
        [[{"model": "m", "ss": 60.0, "lms": 80.0, "n": 4}], [{"model": "m", "ss": 55.0, "lms": 90.5, "n": 3}]],
        compared,
    )
    assert rows[0]["change ss a→b"] == -5.0 and rows[0]["change lms a→b"] == 10.5
    assert "change n a→b" not in rows[0]  # a count is shown per version, not as a move


def test_version_tags_read_a_release_version_and_stay_unique(tmp_path):
    release = tmp_path / "exports" / "x" / "1.1.0"
    release.mkdir(parents=True)
    (release / "manifest.json").write_text(json.dumps({"version": "1.1.0"}))
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    for folder in ("a", "b"):
        (tmp_path / folder / "pairs.csv").write_text("x\n")
    assert version_tags(
        [str(release), str(tmp_path / "a" / "pairs.csv"), str(tmp_path / "b" / "pairs.csv"), "org/name@v2.0.0"]
    ) == ["1.1.0", "pairs", "pairs-2", "v2.0.0"]


def _two_versions(kind: str, folder: Path) -> tuple[Path, Path]:
    """The kind's example file, and a copy without its last two data rows."""
    import importlib

    module = importlib.import_module(f"workbench.kinds.{kind.replace('-', '_')}.example")
    first = module.write_example(folder / "v1")
    first = first[0] if isinstance(first, tuple) else first
    lines = first.read_text(encoding="utf-8").splitlines()
    second = folder / "v2" / first.name
    second.parent.mkdir(parents=True)
    second.write_text("\n".join(lines[:-2]) + "\n", encoding="utf-8")
    return first, second


@pytest.mark.parametrize("kind", ["crows-pairs", "sofa"])
def test_two_versions_of_a_file_are_compared_side_by_side(kind, fixture_models, tmp_path, monkeypatch, runner):
    monkeypatch.chdir(tmp_path)
    first, second = _two_versions(kind, tmp_path)
    model = str(fixture_models["mlm-bert"])
    both = invoke(
        runner,
        "evaluate",
        str(first),
        str(second),
        "--kind",
        kind,
        "--model",
        model,
        "--json",
        "out.json",
        "--csv",
        "out.csv",
        "--plots",
        "plots",
        "--cache",
        "c.sqlite",
    )
    assert both.exit_code == 0, both.output + str(both.exception)
    doc = json.loads((tmp_path / "out.json").read_text())
    tags = [v["tag"] for v in doc["versions"]]
    assert len(tags) == 2 and tags[0] != tags[1]
    alone = invoke(
        runner, "evaluate", str(second), "--kind", kind, "--model", model, "--json", "alone.json", "--cache", "c.sqlite"
    )
    assert alone.exit_code == 0
    own = json.loads((tmp_path / f"out.{tags[1]}.json").read_text())
    assert own["models"] == json.loads((tmp_path / "alone.json").read_text())["models"]  # each version as if alone
    headline = doc["measures"][0]
    overall = doc["rows"][0]
    first_doc = json.loads((tmp_path / f"out.{tags[0]}.json").read_text())
    assert overall[f"{headline} {tags[0]}"] == next(iter(first_doc["models"].values()))["overall"][headline]
    assert overall[f"{headline} {tags[1]}"] == next(iter(own["models"].values()))["overall"][headline]
    counts = [m for m in doc["measures"][1:] if isinstance(overall[f"{m} {tags[0]}"], int)]
    assert counts and any(overall[f"{m} {tags[0]}"] > overall[f"{m} {tags[1]}"] for m in counts)  # rows were cut
    assert (tmp_path / "plots" / "versions.png").stat().st_size > 0
    assert all((tmp_path / "plots" / t).is_dir() for t in tags)
    assert (tmp_path / "out.csv").read_text().splitlines()[0].startswith(",".join(doc["keys"]))
    assert f"{kind}: {tags[0]} vs {tags[1]}" in " ".join(both.output.split())


def test_an_unreadable_changes_file_is_named_not_a_traceback(tmp_path):
    from workbench.core.errors import InputError
    from workbench.evaluation.versions import without_dropped

    release = tmp_path / "1.1.0"
    release.mkdir()
    (release / "changes.csv").write_bytes(b"change,id\nremoved,caf\xe9\n")  # Latin-1, not UTF-8
    with pytest.raises(InputError, match="changes.csv: cannot read"):
        without_dropped(str(tmp_path / "original.csv"), str(release), tmp_path)


def test_no_drop_edit_split_when_the_changes_are_since_another_release(tmp_path):
    """1.0.0 against 1.2.0 whose changes.csv is since 1.1.0: what 1.1.0 dropped is not listed,
    so a split would count it as editing; there is none, and the reason names both versions."""
    from workbench.evaluation.versions import changes_not_since, without_dropped

    def release(version, previous=None):
        folder = tmp_path / version
        folder.mkdir()
        (folder / "manifest.json").write_text(json.dumps({"version": version, "previous_version": previous}))
        (folder / "changes.csv").write_text("change,id\nremoved,7\n")
        return str(folder)

    first, since_first, since_other = release("1.0.0"), release("1.1.0", "1.0.0"), release("1.2.0", "1.1.0")
    written = []

    def without(source, removed, folder):
        written.append(removed)
        return Path(source), 1

    assert without_dropped(first, since_first, tmp_path, without) == (Path(first), 1) and written == [{"7"}]
    assert "since 1.1.0, not since 1.0.0" in changes_not_since(first, since_other)
    assert without_dropped(first, since_other, tmp_path, without) is None and len(written) == 1
