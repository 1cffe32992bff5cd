"""The label store (events, undo, torn lines, concurrency) and the final-label policy."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from workbench.annotation.policy import agreement, final_labels
from workbench.annotation.store import LabelNotSaved, LabelStore, load_all, read_events
from workbench.core.errors import InputError
from workbench.kinds.nli.scheme import NLI_SCHEME


def test_latest_wins_and_undo_restores_the_previous_label(tmp_path):
    store = LabelStore(tmp_path, "alice")
    store.label("x", "valid", "pro")
    store.label("x", "invalid")
    assert store.states["x"].label == "invalid"
    store.undo("x")
    assert (store.states["x"].label, store.states["x"].stance) == ("valid", "pro")
    store.undo("x")
    assert store.states["x"].label is None
    assert store.undo("x") is None  # nothing left to undo
    store.append("x", "note", note="check grammar")
    store.append("x", "flag", flag=True)
    reloaded = LabelStore(tmp_path, "alice")
    assert (
        reloaded.states["x"].label is None
        and reloaded.states["x"].note == "check grammar"
        and reloaded.states["x"].flag
    )
    types = [json.loads(line)["type"] for line in (tmp_path / "alice.jsonl").read_text().splitlines()]
    assert types == ["label", "label", "undo", "undo", "note", "flag"]


def test_torn_last_line_is_reported_ignored_and_cut_on_next_write(tmp_path):
    store = LabelStore(tmp_path, "alice")
    for i in range(3):
        store.label(f"i{i}", "invalid")
    store.close()
    path = tmp_path / "alice.jsonl"
    with open(path, "ab") as f:
        f.write(b'{"id": "torn", "item": "i9", "annotator": "ali')
    events, report = read_events(path)
    assert len(events) == 3 and report.torn and ":4: last line is incomplete" in report.torn
    store = LabelStore(tmp_path, "alice")
    assert store.labelled() == {"i0", "i1", "i2"} and store.warnings()
    store.label("i3", "incoherent")
    events, report = read_events(path)
    assert [e["item"] for e in events] == ["i0", "i1", "i2", "i3"] and report.torn is None
    assert b'"ali' in (tmp_path / "alice.jsonl.torn").read_bytes()  # kept aside, not lost


def test_bad_line_in_the_middle_is_reported_with_its_line(tmp_path):
    path = tmp_path / "bob.jsonl"
    good = {"id": "e1", "item": "a", "annotator": "bob", "type": "label", "label": "invalid"}
    path.write_text(
        json.dumps(good)
        + "\n"
        + '{"id": "e2", "item": "b", "annotator": "bob", "type": "label", "label": "great"}\n'
        + json.dumps({**good, "id": "e3", "item": "c"})
        + "\n"
    )
    events, report = read_events(path, NLI_SCHEME)
    assert [e["id"] for e in events] == ["e1", "e3"]
    assert len(report.bad_lines) == 1 and report.bad_lines[0].endswith(
        "bob.jsonl:2: unknown label 'great'; line ignored"
    )


def test_bad_annotator_name_is_refused(tmp_path):
    with pytest.raises(InputError, match="annotator name"):
        LabelStore(tmp_path, "../etc/passwd")


WRITER = """
import sys
from pathlib import Path
from workbench.annotation.store import LabelStore
store = LabelStore(Path(sys.argv[1]), sys.argv[2])
for i in range(int(sys.argv[3])):
    store.label(f"{sys.argv[4]}{i}", "invalid")
"""


def test_concurrent_writers_lose_nothing(tmp_path):
    procs = [
        subprocess.Popen([sys.executable, "-c", WRITER, str(tmp_path), name, "150", prefix])
        for name, prefix in (("alice", "a"), ("bob", "b"), ("alice", "c"), ("bob", "d"))
    ]
    assert all(p.wait(timeout=120) == 0 for p in procs)
    states, warnings = load_all(tmp_path)
    assert warnings == []
    assert len(states["alice"]) == 300 and len(states["bob"]) == 300
    for name in ("alice", "bob"):
        events, _ = read_events(tmp_path / f"{name}.jsonl")
        assert len(events) == 300 and len({e["id"] for e in events}) == 300


def _states(tmp_path, votes: dict[str, dict[str, str]]):
    for annotator, labels in votes.items():
        store = LabelStore(tmp_path, annotator)
        for item, cat in labels.items():
            label, _, stance = cat.partition("-")
            store.label(item, label, stance or None)
    states, _ = load_all(tmp_path)
    return states


def test_policies(tmp_path):
    states = _states(
        tmp_path,
        {
            "a": {"x": "valid-pro", "y": "invalid", "z": "valid-pro", "w": "incoherent"},
            "b": {"x": "valid-pro", "y": "valid-anti", "z": "invalid"},
            "c": {"x": "invalid", "y": "incoherent", "z": "valid-pro"},
        },
    )
    items = ["x", "y", "z", "w", "v"]
    majority = final_labels(states, items, "majority", min_votes=2, scheme=NLI_SCHEME)
    assert majority["x"].category == "valid-pro" and majority["x"].stance == "pro"
    assert majority["y"].status == "disagreement"  # three different votes
    assert majority["z"].category == "valid-pro"
    assert majority["w"].status == "not-enough-votes"  # one vote < min_votes: not a disagreement
    assert majority["v"].status == "unlabelled"
    assert final_labels(states, ["x"], "majority", min_votes=3, scheme=NLI_SCHEME)["x"].status == "disagreement"
    single = final_labels({"a": states["a"]}, items, "single", scheme=NLI_SCHEME)
    assert single["w"].category == "incoherent" and single["w"].label == "incoherent"
    assert final_labels(states, ["x"], "single", scheme=NLI_SCHEME)["x"].status == "disagreement"
    adjudicated = final_labels(states, ["y", "x"], "adjudicator", adjudicator="c", scheme=NLI_SCHEME)
    assert adjudicated["y"].category == "incoherent" and adjudicated["x"].category == "invalid"


def test_agreement_matches_hand_computed_cohen_kappa(tmp_path):
    states = _states(
        tmp_path,
        {
            "a": {"1": "valid-pro", "2": "valid-pro", "3": "invalid", "4": "invalid", "5": "incoherent"},
            "b": {"1": "valid-pro", "2": "invalid", "3": "invalid", "4": "invalid", "5": "incoherent"},
        },
    )
    result = agreement(states, NLI_SCHEME)
    pair = result["pairs"][0]
    assert pair["agreement"] == pytest.approx(0.8)
    # p_o = 0.8; p_e = .4*.2 + .4*.6 + .2*.2 = 0.36; kappa = (0.8 - 0.36) / 0.64
    assert pair["cohen_kappa"] == pytest.approx(0.6875)
    assert -1 <= result["fleiss_kappa"] <= 1 and -1 <= result["krippendorff_alpha"] <= 1
    assert result["fleiss_items"] == 5


# -- issue 29: never lost, batches, case, old files -------------------------------------------
FSIZE = r"""
import json, os, resource, signal, sys
from pathlib import Path
from workbench.annotation.store import LabelNotSaved, LabelStore

folder, mode = Path(sys.argv[1]), sys.argv[2]
store = LabelStore(folder, "alice")
store.label("A", "invalid")
signal.signal(signal.SIGXFSZ, signal.SIG_IGN)       # a write past the limit fails with EFBIG
soft, hard = resource.getrlimit(resource.RLIMIT_FSIZE)
resource.setrlimit(resource.RLIMIT_FSIZE, (store.path.stat().st_size + 40, hard))
try:
    if mode == "label":
        store.label("B", "invalid")
    else:
        with store.batch():
            for i in range(20):
                store.label(f"B{i}", "incoherent")
    print(json.dumps({"B": "saved"}))
except LabelNotSaved as exc:
    print(json.dumps({"B": str(exc), "size": store.path.stat().st_size, "in_memory": sorted(store.labelled())}))
resource.setrlimit(resource.RLIMIT_FSIZE, (soft, hard))
store.label("C", "valid", "anti")
print(json.dumps({"C": "saved"}))
"""


@pytest.mark.parametrize("mode", ["label", "batch"])
def test_a_write_cut_short_by_a_full_file_loses_neither_the_label_before_nor_the_next(tmp_path, mode):
    """The issue's reproduction, with a real partial write: the file may grow by 40 bytes only."""
    from conftest import ROOT

    done = subprocess.run(
        [sys.executable, "-c", FSIZE, str(tmp_path), mode], cwd=ROOT, capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, done.stderr
    b, c = (json.loads(line) for line in done.stdout.splitlines())
    what = "this label was" if mode == "label" else "20 events were"
    assert b["B"].startswith(f"File size limit reached: {what} NOT saved to ") and "alice.jsonl" in b["B"]
    assert b["in_memory"] == ["A"]  # not applied either
    assert c == {"C": "saved"}
    events, report = read_events(tmp_path / "alice.jsonl")
    assert [e["item"] for e in events] == ["A", "C"] and report.messages() == []
    store = LabelStore(tmp_path, "alice")
    assert store.labelled() == {"A", "C"} and store.states["C"].stance == "anti" and store.warnings() == []
    assert (tmp_path / "alice.jsonl").read_bytes().count(b"\n") == 2  # the partial line was cut off


def test_a_torn_line_left_by_another_writer_is_moved_aside_before_the_next_append(tmp_path):
    """The repair runs before every append, not only when the file is opened."""
    store = LabelStore(tmp_path, "alice")
    store.label("A", "invalid")  # the file is open from here on
    with open(tmp_path / "alice.jsonl", "ab") as f:  # another process died mid-line
        f.write(b'{"annotator": "alice", "id": "x", "ite')
    store.label("B", "invalid")
    store.label("C", "incoherent")
    events, report = read_events(tmp_path / "alice.jsonl")
    assert [e["item"] for e in events] == ["A", "B", "C"] and report.messages() == []
    assert (tmp_path / "alice.jsonl.torn").read_bytes() == b'{"annotator": "alice", "id": "x", "ite\n'


def test_disk_full_is_said_plainly_and_the_next_write_after_freeing_space_works(tmp_path):
    """/dev/full answers every write with ENOSPC, as a full disk does."""
    store = LabelStore(tmp_path, "alice")
    (tmp_path / "alice.jsonl").symlink_to("/dev/full")
    with pytest.raises(LabelNotSaved) as caught:
        store.label("A", "invalid")
    assert (caught.value.cause, caught.value.what, caught.value.remedy) == ("Disk full", "this label was", "Free space")
    assert str(caught.value).startswith("Disk full: this label was NOT saved to ")
    assert store.events == [] and store.labelled() == set()
    (tmp_path / "alice.jsonl").unlink()  # space freed
    store.label("A", "invalid")
    assert LabelStore(tmp_path, "alice").labelled() == {"A"}


def test_a_batch_is_seen_whole_or_not_at_all_wherever_a_crash_cuts_it(tmp_path):
    store = LabelStore(tmp_path, "alice")
    store.label("before", "invalid")
    base = (tmp_path / "alice.jsonl").read_bytes()
    with store.batch():
        for i in range(30):
            store.label(f"b{i}", "valid", "pro")
        store.append("b0", "note", note="a note in the batch")
    store.close()
    full = (tmp_path / "alice.jsonl").read_bytes()
    assert full.count(b"\n") == 32 and full.count(b'"batch_size": 31') == 1
    cut_file = tmp_path / "cut" / "alice.jsonl"
    cut_file.parent.mkdir()
    seen = set()
    for cut in range(len(base), len(full) + 1, 7):
        cut_file.write_bytes(full[:cut])
        events, report = read_events(cut_file)
        items = [e["item"] for e in events]
        assert items in (["before"], ["before", *(f"b{i}" for i in range(30)), "b0"]), cut
        seen.add(len(items))
        if len(items) == 1 and cut > len(base):
            assert report.messages()  # the interrupted batch is reported
    assert seen == {1, 32}
    # after a cut mid-batch, the next write moves the batch's remains aside and a rerun completes it
    cut_file.write_bytes(full[: len(base) + (len(full) - len(base)) // 2])
    again = LabelStore(cut_file.parent, "alice")
    assert again.labelled() == {"before"} and any("interrupted" in w for w in again.warnings())
    with again.batch():
        for i in range(30):
            again.label(f"b{i}", "valid", "pro")
    events, report = read_events(cut_file)
    assert len(events) == 31 and report.messages() == []
    assert (cut_file.parent / "alice.jsonl.torn").exists()


def test_a_batch_that_fails_before_its_end_writes_nothing_and_rolls_back(tmp_path):
    store = LabelStore(tmp_path, "alice")
    store.label("x", "invalid")
    with pytest.raises(RuntimeError):
        with store.batch():
            store.label("x", "incoherent")
            store.label("y", "invalid")
            assert store.states["x"].label == "incoherent" and store.has_event(store.events[-1]["id"])
            raise RuntimeError("stop")
    assert store.labelled() == {"x"} and store.states["x"].label == "invalid" and len(store.events) == 1
    assert len(read_events(tmp_path / "alice.jsonl")[0]) == 1
    with store.batch():  # a batch of one is a plain event
        store.label("y", "invalid")
    assert "batch" not in (tmp_path / "alice.jsonl").read_text().splitlines()[-1]


def test_batch_files_read_by_the_previous_version_are_plain_events(tmp_path):
    """Older workbench versions ignore the batch keys: a committed batch reads as its events."""
    store = LabelStore(tmp_path, "alice")
    with store.batch():
        for i in range(3):
            store.label(f"i{i}", "invalid")
    for line in (tmp_path / "alice.jsonl").read_text().splitlines():
        event = json.loads(line)
        assert {"id", "item", "annotator", "type", "label", "batch"} <= set(event)


def _fixture_states(states):
    return {
        a: {
            i: {
                "label": s.label,
                "stance": s.stance,
                "note": s.note,
                "flag": s.flag,
                "label_event": s.label_event,
                "history": list(s.history),
            }
            for i, s in sorted(st.items())
        }
        for a, st in sorted(states.items())
    }


def test_files_written_before_issue_29_load_unchanged(tmp_path):
    import shutil

    from conftest import FIXTURES

    source = FIXTURES / "labels_v1"
    expected = json.loads((source / "expected.json").read_text())
    folder = tmp_path / "annotations"
    shutil.copytree(source / "annotations", folder)
    before = {p.name: p.read_bytes() for p in folder.iterdir()}
    states, warnings = load_all(folder)
    got = _fixture_states(states)
    for name in ("alice", "bob"):
        assert got[name] == expected["load_all"][name]
    assert "bob.jsonl:6: last line is incomplete (a crash while writing?); ignored" in " ".join(warnings)
    for name, count in expected["events"].items():
        assert len(read_events(folder / name)[0]) == count
    # Lena and lena are one person now: one annotator, events merged by time (lena's later label wins)
    assert "lena" not in got and sorted(got["Lena"]) == ["item000000", "item000001", "item000002", "item000003"]
    assert got["Lena"]["item000002"]["label"] == "incoherent" and got["Lena"]["item000000"]["label"] == "invalid"
    assert any("Lena.jsonl" in w and "lena.jsonl" in w and "one annotator" in w for w in warnings)
    assert {p.name: p.read_bytes() for p in folder.iterdir()} == before  # reading changed nothing
    # the stores load the same states, and writing to an old file keeps every old event
    alice = LabelStore(folder, "alice")
    assert _fixture_states({"alice": alice.states})["alice"] == expected["load_all"]["alice"]
    alice.undo("item000001")
    alice.label("item000009", "valid", "pro")
    reloaded = LabelStore(folder, "alice")
    assert reloaded.states["item000001"].label is None and reloaded.states["item000009"].stance == "pro"
    assert len(reloaded.events) == expected["events"]["alice.jsonl"] + 2


def test_annotator_names_are_one_person_whatever_their_case(tmp_path):
    from workbench.core.errors import InputError as Refused

    first = LabelStore(tmp_path, "Lena")
    first.label("a", "invalid")
    second = LabelStore(tmp_path, "lena")
    assert second.path == tmp_path / "Lena.jsonl" and second.annotator == "Lena" and second.labelled() == {"a"}
    second.label("b", "invalid")
    assert sorted(p.name for p in tmp_path.glob("*.jsonl")) == ["Lena.jsonl"]
    states, _ = load_all(tmp_path)
    assert list(states) == ["Lena"] and set(states["Lena"]) == {"a", "b"}
    first.lock_session()
    with pytest.raises(Refused, match="already has a labelling session open"):
        LabelStore(tmp_path, "LENA").lock_session()
    first.close()


def test_files_of_one_annotator_under_two_spellings_are_read_together_and_written_to_one(tmp_path):
    import shutil
    import time

    for name, item in (("Lena", "a"), ("lena", "a")):
        time.sleep(0.01)
        (tmp_path / "tmp").mkdir(exist_ok=True)
        store = LabelStore(tmp_path / "tmp", name)
        store.label(item, "invalid" if name == "Lena" else "incoherent")
        store.close()
        shutil.move(tmp_path / "tmp" / f"{name}.jsonl", tmp_path / f"{name}.jsonl")
    store = LabelStore(tmp_path, "LENA")
    assert store.path.name == "Lena.jsonl" and store.states["a"].label == "incoherent"  # the later one
    assert any("differ only in case" in w for w in store.warnings())
    store.undo("a")  # undoes lena's label, written to Lena.jsonl
    assert store.states["a"].label == "invalid"
    states, _ = load_all(tmp_path)
    assert list(states) == ["Lena"] and states["Lena"]["a"].label == "invalid"
    assert final_labels(states, ["a"], "adjudicator", adjudicator="LENA", scheme=NLI_SCHEME)["a"].category == "invalid"


def test_incremental_state_equals_a_full_replay(tmp_path):
    """Random labels, relabels, undos, notes and flags: the store's running state, its
    latest label in force and has_event equal what a replay of the file gives."""
    import random

    from workbench.annotation.store import fold

    rng = random.Random(29)
    store = LabelStore(tmp_path, "alice")
    items = [f"i{k}" for k in range(12)]
    for step in range(600):
        item = rng.choice(items)
        roll = rng.random()
        if roll < 0.45:
            store.label(item, *rng.choice([("valid", "pro"), ("valid", "anti"), ("invalid", None)]))
        elif roll < 0.75:
            latest = store.latest_label()
            store.undo(latest["item"] if latest and rng.random() < 0.7 else item)
        elif roll < 0.85:
            store.append(item, "note", note=rng.choice(["", "n1", "n2"]))
        else:
            store.append(item, "flag", flag=rng.random() < 0.5)
        if step % 50 == 49:
            store = LabelStore(tmp_path, "alice")  # reloaded from the file mid-way
        replay = fold(read_events(tmp_path / "alice.jsonl")[0])
        assert _fixture_states({"a": store.states}) == _fixture_states({"a": replay})
        in_force = [e for e in store.events if e["type"] == "label" and store.states[e["item"]].label_event == e["id"]]
        assert store.latest_label() == (in_force[-1] if in_force else None)
        odd = [e for e in in_force if int(e["item"][1:]) % 2]
        assert store.latest_label(lambda e: int(e["item"][1:]) % 2 == 1) == (odd[-1] if odd else None)
    assert all(store.has_event(e["id"]) for e in store.events) and not store.has_event("nope")


def test_odd_lines_are_named_whether_the_file_parses_in_one_go_or_not(tmp_path):
    good = {"id": "e1", "item": "a", "annotator": "bob", "type": "label", "label": "invalid"}
    path = tmp_path / "bob.jsonl"
    for middle, problem in (
        ("null", ":2: not a JSON object"),
        ("[1, 2]", ":2: not a JSON object"),
        ('{"id": "e9", "item": "b"} {"x": 1}', ":2: unreadable (JSONDecodeError)"),
        ("", None),
        ("\\xff", ":2: unreadable"),
    ):
        path.write_bytes(
            json.dumps(good).encode()
            + b"\n"
            + middle.encode().decode("unicode_escape").encode("latin-1")
            + b"\n"
            + json.dumps({**good, "id": "e3"}).encode()
            + b"\n"
        )
        events, report = read_events(path)
        assert [e["id"] for e in events] == ["e1", "e3"], middle
        assert (
            (report.bad_lines == [])
            if problem is None
            else (len(report.bad_lines) == 1 and problem in report.bad_lines[0])
        )


def test_an_undo_in_one_spelling_of_a_name_follows_its_target_in_the_other_even_at_the_same_millisecond(tmp_path):
    stamp = "2025-05-05T10:00:00.000Z"
    event = {"annotator": "Lena", "item": "a", "source": "tui", "timestamp": stamp}
    (tmp_path / "Lena.jsonl").write_text(
        json.dumps({**event, "id": "l1", "type": "label", "label": "invalid"})
        + "\n"
        + json.dumps({**event, "id": "u1", "type": "undo", "undoes": "l2"})
        + "\n"
    )
    (tmp_path / "lena.jsonl").write_text(
        json.dumps({**event, "annotator": "lena", "id": "l2", "type": "label", "label": "incoherent"}) + "\n"
    )
    assert LabelStore(tmp_path, "lena").states["a"].label == "invalid"
    assert load_all(tmp_path)[0]["Lena"]["a"].label == "invalid"


def test_majority_with_too_few_votes_is_not_a_disagreement(tmp_path):
    """One vote, or votes that agree but are fewer than min_votes, wait for more votes; votes
    that differ are a disagreement however many there are."""
    states = _states(
        tmp_path,
        {"a": {"one": "invalid", "two": "invalid", "split": "invalid"}, "b": {"two": "invalid", "split": "incoherent"}},
    )
    finals = final_labels(states, ["one", "two", "split"], "majority", min_votes=3, scheme=NLI_SCHEME)
    assert finals["one"].status == "not-enough-votes" and finals["one"].votes == {"a": "invalid"}
    assert finals["two"].status == "not-enough-votes" and not finals["two"].kept
    assert finals["split"].status == "disagreement"
    assert final_labels(states, ["two"], "majority", min_votes=2, scheme=NLI_SCHEME)["two"].status == "final"
