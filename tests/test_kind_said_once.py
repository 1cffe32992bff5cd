"""Each fact of a kind said once (issue 56 item 1): a plugin whose evaluator declares an option
in its `Declared.options` only gets it everywhere — offered by `workbench evaluate` (a fresh
process, where the command's options are made from the installed kinds), its value reaching the
evaluation, and accepted by the release's standalone evaluate.py made from the same declaration.
The kind's standalone module and resampling unit come from the declaration too, the annotator's
question from the scheme (`Authoring.question`), and an option said in the Kind alone — which
would be offered and never reach the evaluation — is refused in one line naming it."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest
from conftest import ROOT
from support.plugins import plugins_for

INIT = """\
from workbench.kinds.base import Kind

KIND = Kind(name="once-kind", description="an option said once", evaluator="once_kind_plugin.evaluate")
"""

EVALUATE = """\
from workbench.core.evaluator_option import EvaluatorOption
from workbench.evaluation.declared import Declared, mean

FRAME = EvaluatorOption("--frame", "how a text is framed before it is measured", default="<{text}>", metavar="F")


def item(record, bad):
    return {"text": record["text"], "group": record["group"], "unit": record["unit"]}


def score(models, items, options, progress):
    progress(len(items))
    return [{"length": len(options["frame"].format(text=i["text"]))} for i in items]


DECLARED = Declared(
    kind="once-kind",
    title="once",
    meaning="the framed texts' mean length",
    data="data/items.jsonl",
    required=("text", "group", "unit"),
    item=item,
    score=score,
    statistics=(mean("length", "framed length", "length"),),
    group="group",
    cluster="unit",
    unit="pair",
    units="pairs",
    options=(FRAME,),
    open_model=lambda role, name, how: name,  # no model: the figure is the frame's
)
"""

ROWS = [
    {"text": "ab", "group": "g", "unit": "1"},
    {"text": "abcd", "group": "g", "unit": "1"},
    {"text": "abcdef", "group": "h", "unit": "2"},
]


@pytest.fixture
def plugins(tmp_path, monkeypatch):
    yield from plugins_for(tmp_path, monkeypatch)


def run(args: list[str], cwd, path) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(path), str(ROOT)]), "WORKBENCH_PROGRESS": "0"}
    return subprocess.run(args, cwd=cwd, env=env, capture_output=True, text=True, timeout=300, check=False)


def mean_length(frame: str) -> float:
    return sum(len(frame.format(text=r["text"])) for r in ROWS) / len(ROWS)


def test_an_option_declared_once_is_offered_evaluated_and_taken_by_the_release_script(plugins, tmp_path):
    from workbench import kinds
    from workbench.release import standalone

    plugins.install("once-kind", __init__=INIT, evaluate=EVALUATE)
    site = plugins.root
    data = tmp_path / "release" / "data"
    data.mkdir(parents=True)
    (data / "items.jsonl").write_text("".join(json.dumps(r) + "\n" for r in ROWS), encoding="utf-8")

    helped = run([sys.executable, "-m", "workbench", "evaluate", "--help"], tmp_path, site)
    assert helped.returncode == 0, helped.stderr
    assert "--frame" in helped.stdout and "once-kind:" in helped.stdout

    out = tmp_path / "scores.json"
    given = [sys.executable, "-m", "workbench", "evaluate", str(data / "items.jsonl"), "--kind", "once-kind"]
    ran = run([*given, "--model", "m", "--frame", "[[{text}]]", "--json", str(out)], tmp_path, site)
    assert ran.returncode == 0, ran.stderr
    doc = json.loads(out.read_text())
    assert doc["options"]["frame"] == "[[{text}]]"
    assert doc["models"]["m"]["overall"]["length"] == pytest.approx(mean_length("[[{text}]]"))
    assert doc["n_units"] == 2 and doc["unit"] == "pairs"
    ran = run([*given, "--model", "m", "--json", str(out)], tmp_path, site)  # the default, as declared
    assert json.loads(out.read_text())["models"]["m"]["overall"]["length"] == pytest.approx(mean_length("<{text}>"))

    # The kind says the rest from its declaration: the release's script and its resampling unit.
    kind = kinds.get("once-kind")
    assert kind.standalone_module() == "once_kind_plugin.evaluate"
    assert (kind.resampled().unit, kind.resampled().units) == ("pair", "pairs")
    release = tmp_path / "release"
    assert standalone.write(kind, None, release)
    alone = tmp_path / "alone.json"
    script = [sys.executable, "evaluate.py", "--unverified", "--model", "m", "--frame", "[[{text}]]"]
    ran = run([*script, "--json", str(alone)], release, "")
    assert ran.returncode == 0, ran.stderr
    assert json.loads(alone.read_text())["models"]["m"]["overall"]["length"] == pytest.approx(mean_length("[[{text}]]"))


def test_an_option_said_in_the_kind_alone_is_refused_in_one_line(plugins):
    from workbench import kinds
    from workbench.contract.loader import KindBroken

    init = INIT.replace(
        'evaluator="once_kind_plugin.evaluate")',
        'evaluator="once_kind_plugin.evaluate",\n'
        '            evaluator_options=(EvaluatorOption("--prompt", "a prompt"),))',
    ).replace("import Kind\n", "import Kind\nfrom workbench.core.evaluator_option import EvaluatorOption\n")
    plugins.install("once-kind", __init__=init, evaluate=EVALUATE)
    kind = kinds.get("once-kind")
    assert [o.flag for o in kind.options()] == ["--prompt"]  # said here: what the command offers
    with pytest.raises(KindBroken) as refused:
        kind.evaluator_module()
    assert str(refused.value) == (
        "kind 'once-kind' (once-kind-plugin 0.1.0): --prompt is in its Kind.evaluator_options but not in "
        "once_kind_plugin.evaluate.DECLARED.options, so the evaluation would never see it: declare an option "
        "once, in DECLARED.options (the Kind reads it from there)"
    )


def test_the_annotators_question_is_the_schemes_when_the_words_leave_it_out():
    from workbench.annotation import display
    from workbench.authoring.stages import VALIDITY_SCHEME
    from workbench.core.labels import LabelScheme
    from workbench.kinds.base import AnnotatorWords, Field, Kind

    asked = "Is this item fair?"  # as `kind_fields(AUTHORING)` makes the scheme from Authoring.question
    scheme = LabelScheme("q-validity", VALIDITY_SCHEME.choices, question=asked)
    kind = Kind(name="q", description="q", scheme=scheme, words=AnnotatorWords(fields=(Field("context", "c"),)))
    assert kind.question == kind.words.question == asked
    assert display.question(None, kind.words, kind.scheme) == asked
    said = Kind(name="q", description="q", scheme=scheme, words=AnnotatorWords("Own words?", (Field("c", "c"),)))
    assert said.question == "Own words?"  # the kind's own question still wins
