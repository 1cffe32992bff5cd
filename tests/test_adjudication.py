"""Adjudication as a policy of every kind, agreement over the annotators on the queue's items,
and the annotators' notes and flags where adjudicators and `annotations stats` see them
(issue 34, points 2, 3 and 9)."""

from __future__ import annotations

import asyncio
import json

import pytest
from conftest import invoke
from support.kind_projects import queue_items
from test_annotate_tui import flat, screen_text

import workbench.cli.main  # noqa: F401  (the CLI's consoles are made at import: not inside a running app)
from workbench import kinds
from workbench.annotation.policy import agreement, final_labels
from workbench.annotation.session import Session
from workbench.annotation.store import LabelStore, load_all
from workbench.core.config import load_config
from workbench.kinds.nli.scheme import NLI_SCHEME
from workbench.tui.app import AnnotateApp

VALIDITY = kinds.get("crows-pairs").scheme


def _label(folder, name, labels: dict, scheme, role=None):
    store = LabelStore(folder, name, scheme=scheme)
    for item, choice in labels.items():
        store.label(item, *scheme.decode(choice), role=role)
    store.close()


def test_an_adjudication_decides_disputed_items_under_every_policy(tmp_path):
    _label(tmp_path, "a", {"x": "valid-pro", "y": "invalid", "z": "invalid"}, NLI_SCHEME)
    _label(tmp_path, "b", {"x": "valid-anti", "y": "invalid", "z": "incoherent"}, NLI_SCHEME)
    # judge ran `annotate --adjudicate` (no name configured): x is disputed, y is agreed
    _label(tmp_path, "judge", {"x": "invalid", "y": "incoherent"}, NLI_SCHEME, role="adjudicator")
    states, _ = load_all(tmp_path, NLI_SCHEME)
    for policy in ("single", "majority"):
        finals = final_labels(states, ["x", "y", "z"], policy, 2, scheme=NLI_SCHEME)
        assert (finals["x"].status, finals["x"].category, finals["x"].adjudicated) == ("final", "invalid", True)
        assert finals["x"].votes == {"a": "valid-pro", "b": "valid-anti"} and finals["x"].rulings == {
            "judge": "invalid"
        }
        assert (finals["y"].category, finals["y"].adjudicated) == ("invalid", False)  # agreed: annotators decide
        assert finals["z"].status == "disagreement" and finals["z"].disputed  # not adjudicated yet
    # `policy = "adjudicator"` alone: the adjudicator's label decides every item it is on
    finals = final_labels(states, ["x", "y"], "adjudicator", scheme=NLI_SCHEME)
    assert finals["x"].category == "invalid" and finals["y"].category == "incoherent"
    # a configured adjudicator's plain labels are adjudications too (any case of the name)
    _label(tmp_path, "boss", {"z": "incoherent"}, NLI_SCHEME)
    states, _ = load_all(tmp_path, NLI_SCHEME)
    finals = final_labels(states, ["z"], "single", adjudicator="BOSS", scheme=NLI_SCHEME)
    assert finals["z"].category == "incoherent" and finals["z"].votes == {"a": "invalid", "b": "incoherent"}
    # two adjudicators who disagree decide nothing
    _label(tmp_path, "judge", {"z": "invalid"}, NLI_SCHEME, role="adjudicator")
    states, _ = load_all(tmp_path, NLI_SCHEME)
    assert final_labels(states, ["z"], "single", adjudicator="boss", scheme=NLI_SCHEME)["z"].status == "disagreement"
    # undoing the adjudication puts the item back in dispute; the label file keeps every event
    store = LabelStore(tmp_path, "judge", scheme=NLI_SCHEME)
    store.undo("x")
    states, _ = load_all(tmp_path, NLI_SCHEME)
    assert final_labels(states, ["x"], "single", scheme=NLI_SCHEME)["x"].status == "disagreement"
    assert [
        e.get("role")
        for e in map(json.loads, (tmp_path / "judge.jsonl").read_text().splitlines())
        if e["type"] == "label"
    ] == ["adjudicator"] * 3


def test_agreement_is_the_annotators_on_the_given_items_with_a_hand_computed_kappa(tmp_path):
    # Two annotators on five items (valid, invalid, incoherent):
    #   1: v v   2: v i   3: i i   4: i i   5: c i        N = 5 items, m = 2 raters
    # p_valid = 3/10, p_invalid = 6/10, p_incoherent = 1/10; P = (1+0+1+1+0)/5 = 0.6;
    # P_e = .09 + .36 + .01 = .46; kappa = (.6 - .46) / (1 - .46) = 7/27.
    # Per label (Fleiss 1971): 1 - sum n(m-n) / (N m (m-1) p q):
    #   valid 1 - 1/(10*.3*.7) = 11/21, invalid 1 - 2/(10*.6*.4) = 1/6, incoherent 1 - 1/(10*.1*.9) = -1/9.
    _label(
        tmp_path,
        "a",
        {"1": "valid", "2": "valid", "3": "invalid", "4": "invalid", "5": "incoherent", "retired": "valid"},
        VALIDITY,
    )
    _label(
        tmp_path,
        "b",
        {"1": "valid", "2": "invalid", "3": "invalid", "4": "invalid", "5": "invalid", "retired": "incoherent"},
        VALIDITY,
    )
    _label(tmp_path, "judge", {"2": "valid", "5": "valid"}, VALIDITY, role="adjudicator")
    _label(tmp_path, "boss", {"1": "incoherent", "3": "incoherent"}, VALIDITY)
    states, _ = load_all(tmp_path, VALIDITY)
    result = agreement(states, VALIDITY, {"1", "2", "3", "4", "5"}, adjudicator="boss")
    assert result["annotators"] == ["a", "b"] and result["adjudicators"] == ["boss", "judge"]
    assert result["items"] == 5 and result["fleiss_items"] == 5  # the retired item does not count
    assert result["fleiss_kappa"] == pytest.approx(7 / 27)
    assert result["fleiss_per_label"] == pytest.approx({"valid": 11 / 21, "invalid": 1 / 6, "incoherent": -1 / 9})
    assert result["pairs"][0]["agreement"] == pytest.approx(0.6)
    # counting the retired item and the adjudicators (as before) gives other figures
    assert agreement(states, VALIDITY)["items"] == 6


def _labels_file(path, labels: dict, notes: dict = {}, flags: set = frozenset()):
    path.write_text(
        "".join(
            json.dumps(
                {
                    "item_id": i,
                    "label": c,
                    **({"note": notes[i]} if i in notes else {}),
                    **({"flag": True} if i in flags else {}),
                }
            )
            + "\n"
            for i, c in labels.items()
        ),
        encoding="utf-8",
    )
    return path


@pytest.fixture(scope="module")
def kind_project(tmp_path_factory, queued_project):
    made = {}

    def project(name):
        if name not in made:
            made[name] = queued_project(name, tmp_path_factory.mktemp(name.replace("-", "_")) / name)
        return made[name]

    return project


@pytest.mark.parametrize("name", ["nli", "crows-pairs", "stereoset"])
def test_adjudication_with_the_default_setup_from_labels_to_stats(name, kind_project, tmp_path, monkeypatch, runner):
    import shutil

    project = tmp_path / "p"
    shutil.copytree(kind_project(name), project)
    monkeypatch.chdir(project)
    kind, items = queue_items(project)
    ids = [i.id for i in items]
    first, second = kind.scheme.ids[:2]
    disputed = ids[0]
    a = {i: first for i in ids}
    b = {**a, disputed: second}
    _labels_file(project / "a.jsonl", a, notes={disputed: "the pair differs in two words"}, flags={disputed})
    _labels_file(project / "b.jsonl", b, notes={ids[1]: "fine, but check the spelling"})
    for who in ("a", "b"):
        assert invoke(runner, "annotate", "-a", who, "--labels-from", f"{who}.jsonl").exit_code == 0
    # an annotator cannot adjudicate what they voted on
    result = invoke(runner, "annotate", "-a", "b", "--adjudicate")
    assert result.exit_code == 2 and "adjudicate under another name" in str(result.exception)

    # The adjudicator's screen, as `annotate --adjudicate` makes it: the disputed item only, with the
    # annotators' votes, notes and flags.
    from workbench.cli.annotate import _disputes

    config = load_config(project / "workbench.toml")
    disputes, messages = _disputes(config, items, "judge", kind.scheme)
    assert list(disputes) == [disputed] and messages == []
    store = LabelStore(config.path("annotations"), "judge", scheme=kind.scheme)
    session = Session(items, store, adjudicate_with=disputes, scheme=kind.scheme, words=kind.words)
    app = AnnotateApp(session, "judge", content_note=False)

    async def go():
        async with app.run_test(size=(80, 24)) as pilot:
            await pilot.pause()
            seen = flat(screen_text(app))
            while app.screen.item_cut():
                await pilot.press("pagedown")
                seen += " " + flat(screen_text(app))
            assert seen.startswith("judge (adjudicating) · 0/1 labelled")
            assert f"others a: {first}, b: {second}" in seen
            assert "their note a: the pair differs in two words" in seen
            assert "flagged by a" in seen
            await pilot.press(kind.scheme.choice(second).key)
            await pilot.press("q")

    asyncio.run(go())
    store.close()

    out = project / "stats.json"
    result = invoke(runner, "annotations", "stats", "--json", str(out))
    assert result.exit_code == 0, result.output
    assert "Disputed items: 1; resolved by an adjudicator: 1; still disputed: 0" in result.output
    assert "adjudicators, not counted: judge" in result.output
    summary = json.loads(out.read_text())
    adj = summary["adjudication"]
    assert (adj["disputed"], adj["resolved"], adj["unresolved"]) == (1, 1, 0)
    assert adj["items"][0] == {
        "item_id": disputed,
        "text": items[0].hypothesis,
        "votes": {"a": first, "b": second},
        "adjudications": {"judge": second},
        "resolved": True,
        "label": second,
    }
    assert summary["notes"] == [
        {
            "item_id": disputed,
            "text": items[0].hypothesis,
            "notes": {"a": "the pair differs in two words"},
            "flagged_by": ["a"],
        },
        {
            "item_id": ids[1],
            "text": items[1].hypothesis,
            "notes": {"b": "fine, but check the spelling"},
            "flagged_by": [],
        },
    ]
    ag = summary["agreement"]
    assert ag["annotators"] == ["a", "b"] and ag["adjudicators"] == ["judge"]
    assert ag["items"] == ag["fleiss_items"] == len(ids)


def test_the_card_counts_annotators_and_adjudicators_and_gives_agreement(kind_project, tmp_path, monkeypatch, runner):
    import shutil

    project = tmp_path / "p"
    shutil.copytree(kind_project("crows-pairs"), project)
    monkeypatch.chdir(project)
    kind, items = queue_items(project)
    ids = [i.id for i in items]
    a = {i: "valid" for i in ids}
    _labels_file(project / "a.jsonl", a)
    _labels_file(project / "b.jsonl", {**a, ids[0]: "invalid"})
    _labels_file(project / "judge.jsonl", {ids[0]: "valid"})
    assert invoke(runner, "annotate", "-a", "a", "--labels-from", "a.jsonl").exit_code == 0
    result = invoke(runner, "annotate", "-a", "judge", "--adjudicate")  # one annotator: nothing disputed
    assert result.exit_code == 2 and "nothing to adjudicate" in str(result.exception)
    assert invoke(runner, "annotate", "-a", "b", "--labels-from", "b.jsonl").exit_code == 0
    # before adjudication, stats say what is still disputed
    result = invoke(runner, "annotations", "stats")
    assert "Disputed items: 1; resolved by an adjudicator: 0; still disputed: 1" in result.output
    assert invoke(runner, "annotate", "-a", "judge", "--adjudicate", "--labels-from", "judge.jsonl").exit_code == 0
    result = invoke(runner, "build", "--version", "1.0.0")
    assert result.exit_code == 0, result.output
    card = (next((project / "exports").iterdir()) / "1.0.0" / "README.md").read_text()
    n = len(ids)
    # a: all valid; b: one invalid. p_valid = (2n-1)/2n; P = (n-1)/n; kappa = (P - P_e) / (1 - P_e)
    p = (2 * n - 1) / (2 * n)
    pe = p * p + (1 - p) * (1 - p)
    kappa = ((n - 1) / n - pe) / (1 - pe)
    assert "Annotators: 2; adjudicators: 1" in card
    assert f"Fleiss' kappa {kappa:.3f} over the {n} items every annotator labelled" in card
    assert f"(per label: valid {kappa:.3f}, invalid {kappa:.3f})" in card
    # An edit retires a pair: its labels stay in the files but no longer count in agreement.
    template = project / "templates" / "age.yaml"
    template.write_text(template.read_text().replace("needs help with the laptop", "needs help with the new laptop"))
    assert invoke(runner, "run").exit_code == 0
    result = invoke(runner, "annotations", "stats", "--json", "s.json")
    assert f"Agreement between 2 annotators ({n - 1} of the {n} queue items)" in " ".join(result.output.split())
    assert json.loads((project / "s.json").read_text())["agreement"]["fleiss_items"] == n - 1
