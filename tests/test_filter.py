"""Adversarial filtering: label normalisation, the k-of-n rule, held-out models, resumable runs."""

from __future__ import annotations

import os
import shutil
import signal
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import ROOT
from workbench.core.config import load_config
from workbench.core.errors import ModelError
from workbench.core.workspace import Workspace
from workbench.kinds.nli import classifier as nli
from workbench.models.fixtures import bias_output
from workbench.kinds import pipeline_for


def make_project(
    root: Path,
    fixture_models,
    filter_models: list[str],
    min_fooled: int = 1,
    held_out: list[str] = (),
    batch_size: int = 32,
    extra: str = "",
    only: tuple[str, ...] = (),
) -> Path:
    """A project of the example benchmark (or `only` those of its template files), expanded and
    generated, filtering with `filter_models`."""
    if only:
        for name in only:
            (root / "templates" / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy(ROOT / "templates" / name, root / "templates" / name)
    else:
        shutil.copytree(ROOT / "templates", root / "templates")
    models = ", ".join(f'"{m}"' for m in filter_models)
    held = ", ".join(f'"{m}"' for m in held_out)
    (root / "workbench.toml").write_text(
        f'[generate]\nmodel = "{fixture_models["mlm-bert"]}"\ntop_k = 10\n'
        f"[filter]\nmodels = [{models}]\nmin_fooled = {min_fooled}\nbatch_size = {batch_size}\n{extra}"
        f"[evaluate]\nmodels = [{held}]\n"
    )
    config = load_config(root / "workbench.toml")
    pipeline_for(config).run("expand")
    pipeline_for(config).run("generate")
    return root


def run_filter(root: Path) -> list[dict]:
    config = load_config(root / "workbench.toml")
    ws = Workspace(config.path("workspace"))
    pipeline_for(config).run("filter")
    return ws.read("filter").to_pylist()


def constant_model(fixture_models, tmp_path, label: str) -> str:
    folder = tmp_path / f"always-{label}"
    if not folder.exists():
        shutil.copytree(fixture_models["nli-b"], folder)
        bias_output(folder, {label: 100.0})
    return str(folder)


def permuted_copy(source: Path, target: Path, order: list[int]) -> Path:
    """The same classifier with its output rows (and id2label) in another order."""
    import torch
    from transformers import AutoModelForSequenceClassification, AutoTokenizer

    model = AutoModelForSequenceClassification.from_pretrained(source)
    head = model.classifier
    with torch.no_grad():
        head.weight.copy_(head.weight[order].clone())
        head.bias.copy_(head.bias[order].clone())
    old = model.config.id2label
    names = ["Entails", "neutral", "CONTRADICTION"]
    canonical = {"entailment": names[0], "neutral": names[1], "contradiction": names[2]}
    model.config.id2label = {i: canonical[old[o].lower()] for i, o in enumerate(order)}
    model.config.label2id = {v: k for k, v in model.config.id2label.items()}
    model.save_pretrained(target)
    AutoTokenizer.from_pretrained(source).save_pretrained(target)
    return target


def test_label_orders_normalise_to_the_same_predictions(fixture_models, tmp_path):
    b = fixture_models["nli-b"]
    other = permuted_copy(b, tmp_path / "nli-b-permuted", [2, 0, 1])
    root = make_project(tmp_path / "p", fixture_models, [str(b), str(other)])
    rows = run_filter(root)
    assert rows
    for r in rows:
        preds = {p["model"]: p for p in r["predictions"]}
        first, second = preds[str(b)], preds[str(other)]
        assert first["label"] == second["label"]
        assert first["probs"] == pytest.approx(second["probs"], abs=1e-5)
        assert set(first["probs"]) == {"entailment", "neutral", "contradiction"}


def test_real_label_orders_of_the_fixtures_are_all_understood(fixture_models):
    from workbench.models.loading import resolve

    for name in ("nli-a", "nli-b", "nli-c"):
        labels = nli.check_labels(resolve(str(fixture_models[name])))
        assert sorted(labels) == ["contradiction", "entailment", "neutral"]
    assert nli.check_labels(resolve(str(fixture_models["nli-a"]))) != nli.check_labels(
        resolve(str(fixture_models["nli-b"]))
    )


def test_label_normalisation_rules():
    assert nli.normalise_labels("m", {0: "ENTAILMENT", 1: "Neutral", 2: "contradiction"}) == [
        "entailment",
        "neutral",
        "contradiction",
    ]
    assert nli.normalise_labels("m", {"0": "contradicts", "1": "entail", "2": "neu"}) == [
        "contradiction",
        "entailment",
        "neutral",
    ]
    with pytest.raises(ModelError, match="LABEL_0.*label_overrides"):
        nli.normalise_labels("m", {0: "LABEL_0", 1: "LABEL_1", 2: "LABEL_2"})
    mapped = nli.normalise_labels(
        "m",
        {0: "LABEL_0", 1: "LABEL_1", 2: "LABEL_2"},
        {"LABEL_0": "neutral", "LABEL_1": "Contradiction", "LABEL_2": "entailment"},
    )
    assert mapped == ["neutral", "contradiction", "entailment"]
    with pytest.raises(ModelError):  # two outputs mapped to one label
        nli.normalise_labels("m", {0: "entailment", 1: "entails", 2: "neutral"})
    with pytest.raises(ModelError, match="has 2 output labels.*needs 3"):  # not a three-way NLI head
        nli.normalise_labels("m", {0: "entailment", 1: "non-entailment"})


def test_unmappable_checkpoint_is_refused_before_any_work(fixture_models, tmp_path):
    from transformers import AutoConfig

    odd = tmp_path / "odd"
    shutil.copytree(fixture_models["nli-b"], odd)
    cfg = AutoConfig.from_pretrained(odd)
    cfg.id2label = {0: "LABEL_0", 1: "LABEL_1", 2: "LABEL_2"}
    cfg.label2id = {v: k for k, v in cfg.id2label.items()}
    cfg.save_pretrained(odd)
    root = make_project(tmp_path / "p", fixture_models, [str(fixture_models["nli-a"]), str(odd)])
    before = nli.CALLS["forward"]
    with pytest.raises(ModelError, match=r"workbench.toml: filter.models\[1\]: cannot map the labels"):
        run_filter(root)
    assert nli.CALLS["forward"] == before  # refused before the first model ran
    text = (
        (root / "workbench.toml")
        .read_text()
        .replace(
            "[evaluate]",
            f'[filter.label_overrides."{odd}"]\nLABEL_0 = "contradiction"\nLABEL_1 = "neutral"\nLABEL_2 = "entailment"\n[evaluate]',
        )
    )
    (root / "workbench.toml").write_text(text)
    assert run_filter(root)


@pytest.mark.parametrize(
    "labels, min_fooled, kept",
    [
        (["contradiction", "neutral", "neutral"], 1, True),
        (["contradiction", "neutral", "neutral"], 2, False),
        (["contradiction", "entailment", "neutral"], 2, True),
        (["contradiction", "entailment", "neutral"], 3, False),
        (["neutral", "neutral", "neutral"], 1, False),
    ],
)
def test_k_of_n_rule(fixture_models, tmp_path, labels, min_fooled, kept):
    models = [constant_model(fixture_models, tmp_path, label) for label in labels]
    models = [shutil.copytree(m, tmp_path / f"m{i}") and str(tmp_path / f"m{i}") for i, m in enumerate(models)]
    rows = run_filter(make_project(tmp_path / "p", fixture_models, models, min_fooled=min_fooled))
    assert rows and all(r["adversarial"] is kept for r in rows)
    assert all(r["n_fooled"] == sum(label != "neutral" for label in labels) for r in rows)


def test_held_out_model_never_affects_filtering(fixture_models, tmp_path):
    neutral = constant_model(fixture_models, tmp_path, "neutral")
    contra = constant_model(fixture_models, tmp_path, "contradiction")
    rows = run_filter(make_project(tmp_path / "p", fixture_models, [neutral], held_out=[contra]))
    assert rows and not any(r["adversarial"] for r in rows)
    assert all([p["model"] for p in r["predictions"]] == [neutral] for r in rows)


def _stored(cache: Path) -> int:
    if not cache.exists():
        return 0
    try:
        with sqlite3.connect(str(cache), timeout=1) as db:
            return db.execute("SELECT COUNT(*) FROM entries WHERE namespace='nli'").fetchone()[0]
    except sqlite3.OperationalError:
        return 0


# Runs `workbench ARGS...` and sends itself signal SIG (argv[1]) just after the cache's first committed
# write of NLI predictions.
STOP_AFTER_FIRST_BATCH = """
import os, sys
from workbench.core.cache import Cache
from workbench.cli.main import main

how, put = int(sys.argv[1]), Cache.put_many

def put_then_stop(self, namespace, *args, **kwargs):
    put(self, namespace, *args, **kwargs)
    if namespace == "nli":
        os.kill(os.getpid(), how)

Cache.put_many = put_then_stop
sys.argv = ["workbench", *sys.argv[2:]]
main()
"""


@pytest.mark.parametrize("how", [signal.SIGKILL, signal.SIGINT], ids=["killed", "ctrl-c"])
def test_stopped_run_resumes_without_recomputing_and_matches(fixture_models, tmp_path, how):
    models = [str(fixture_models["nli-a"]), str(fixture_models["nli-b"])]
    two = ("age/work.yaml", "gender/caregiving.yaml")  # two subtopics: a few hundred pairs, one forward each
    killed = make_project(tmp_path / "killed", fixture_models, models, batch_size=1, only=two)
    expected = run_filter(make_project(tmp_path / "clean", fixture_models, models, batch_size=1, only=two))
    total_pairs = 2 * len({(r["premise"], r["hypothesis"]) for r in expected})

    cache = killed / ".workbench" / "cache" / "models.sqlite"
    base = _stored(cache)

    # The child stops itself right after its first committed batch of NLI predictions, as a user's
    # Ctrl-C (or a kill) landing there would: the outcome depends on no timing, so a loaded machine
    # cannot make the run finish, or stop before anything was written, before the signal arrives.
    proc = subprocess.Popen(
        [sys.executable, "-c", STOP_AFTER_FIRST_BATCH, str(int(how)), "filter"],
        cwd=killed,
        text=True,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        env={**os.environ, "WORKBENCH_PROGRESS": "0"},
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),  # as in a terminal, not a background job
    )
    _, err = proc.communicate(timeout=600)
    stored = _stored(cache) - base
    assert 0 < stored < total_pairs, "the run was not stopped part-way"
    if how == signal.SIGINT:  # Ctrl-C: a message and exit code 130, no traceback
        assert proc.returncode == 130
        assert "interrupted: what was already written is kept" in err and "Traceback" not in err
    with sqlite3.connect(str(cache)) as db:
        assert db.execute("PRAGMA integrity_check").fetchone()[0] == "ok"

    before = nli.CALLS["forward"]
    config = load_config(killed / "workbench.toml")
    result = pipeline_for(config).run("filter")
    assert sum(result["computed_pairs"].values()) == total_pairs - stored
    assert nli.CALLS["forward"] - before == total_pairs - stored  # batch size 1: one call per new pair
    got = Workspace(config.path("workspace")).read("filter").to_pylist()
    strip = lambda rows: [(r["candidate_id"], r["predictions"], r["adversarial"]) for r in rows]
    assert strip(got) == strip(expected)


def test_incremental_filter_equals_a_full_rebuild(fixture_models, tmp_path):
    root = make_project(tmp_path / "p", fixture_models, [str(fixture_models["nli-a"]), str(fixture_models["nli-c"])])
    run_filter(root)
    config = load_config(root / "workbench.toml")
    ws = Workspace(config.path("workspace"))
    src = (root / "templates" / "age" / "work.yaml").read_text()
    (root / "templates" / "age" / "work2.yaml").write_text(
        src.replace("id: age_work", "id: age_work2").replace("[sales, design]", "[support, finance]")
    )
    pipeline_for(config).run("expand")
    pipeline_for(config).run("generate")
    result = pipeline_for(config).run("filter")
    assert result["templates_reused"] == 6 and result["templates_computed"] == 1
    rows = ws.read("filter").to_pylist()
    assert pipeline_for(config).run("filter", force=True)["templates_reused"] == 0
    assert ws.read("filter").to_pylist() == rows


def test_batch_size_halves_on_out_of_memory_and_goes_on():
    from workbench.models.batching import run_batched

    seen, sizes = [], []

    def step(indices):
        if len(indices) > 4:
            raise RuntimeError("CUDA out of memory. Tried to allocate 2.00 GiB")
        sizes.append(len(indices))
        return indices

    final = run_batched([3, 1, 2] * 10, 32, step, lambda idx, result: seen.extend(result))
    assert final == 4 and sorted(seen) == list(range(30)) and max(sizes) == 4
    with pytest.raises(RuntimeError, match="boom"):
        run_batched([1, 2], 2, lambda idx: (_ for _ in ()).throw(RuntimeError("boom")), lambda i, r: None)


def test_pad_batch_pads_each_field_to_the_longest_row():
    from workbench.models.batching import pad_batch

    ids, mask, types = pad_batch([[5, 6, 7], [8]], 0, "cpu", [[0, 0, 1], [1]])
    assert ids.tolist() == [[5, 6, 7], [8, 0, 0]]
    assert mask.tolist() == [[1, 1, 1], [1, 0, 0]]
    assert types.tolist() == [[0, 0, 1], [1, 0, 0]]
    ids, mask = pad_batch([[4], [1, 2]], 9, "cpu")
    assert ids.tolist() == [[4, 9], [1, 2]] and mask.tolist() == [[1, 0], [1, 1]]


def test_a_gpu_runs_the_checkpoints_own_precision_unless_asked(monkeypatch, fixture_models):
    """auto picks the GPU when there is one, in the dtype the checkpoint names (float32 for the
    fixtures); half precision only on request; the cache tag follows both."""
    import torch

    from workbench.models.loading import resolve, runtime_for
    from workbench.models.runtime import LoadSpec

    ref = resolve(str(fixture_models["nli-a"]))
    assert runtime_for(ref, "nli", LoadSpec()).tag == "float32@cpu" or torch.cuda.is_available()
    monkeypatch.setattr(torch.cuda, "is_available", lambda: True)
    auto = runtime_for(ref, "nli", LoadSpec())
    assert (auto.device, auto.dtype, auto.tag) == ("cuda", "float32", "float32@cuda")
    half = runtime_for(ref, "nli", LoadSpec(dtype="bfloat16"))
    assert (half.dtype, half.tag) == ("bfloat16", "bfloat16@cuda")
    assert runtime_for(ref, "nli", LoadSpec(device="cpu")).tag == "float32@cpu"
    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)
    with pytest.raises(ModelError, match="no CUDA GPU"):
        runtime_for(ref, "nli", LoadSpec(device="cuda"))


def test_half_precision_predictions_match_full_precision(fixture_models):
    """The bf16 path a GPU takes, run here on the CPU: logits are upcast before the softmax and
    probabilities stay close to float32. Labels are not compared: a random fixture's top two
    logits are mostly within bf16's rounding of each other (median gap 0.05), which real NLI
    checkpoints' are not."""
    import random

    import torch
    from transformers import AutoModelForSequenceClassification, AutoTokenizer

    from workbench.models.fixtures import vocabulary
    from workbench.models.loading import resolve

    ref = resolve(str(fixture_models["nli-a"]))
    labels = nli.check_labels(ref)
    tok = AutoTokenizer.from_pretrained(ref.location)
    rng = random.Random(0)
    words = [w for w in vocabulary() if w.isalpha()]
    pairs = [(" ".join(rng.choices(words, k=12)) + ".", " ".join(rng.choices(words, k=6)) + ".") for _ in range(200)]
    got = {}
    for dtype in (torch.float32, torch.bfloat16):
        model = AutoModelForSequenceClassification.from_pretrained(ref.location, dtype=dtype).eval()
        clf = nli.NLIClassifier(ref, tok, model, torch.device("cpu"), labels, 32)
        enc = clf.tokenize(pairs)
        got[dtype] = clf.predict_batch(enc["input_ids"], enc.get("token_type_ids"))
    full, half = got[torch.float32], got[torch.bfloat16]
    assert all(abs(sum(p.probs.values()) - 1) < 1e-4 for p in half)
    assert max(abs(a.probs[k] - b.probs[k]) for a, b in zip(full, half) for k in a.probs) < 0.05


def test_fluency_scores_only_the_unique_hypotheses_that_reach_the_queue(fixture_models, tmp_path):
    from workbench.models import mlm

    root = make_project(tmp_path / "p", fixture_models, [str(fixture_models["nli-a"]), str(fixture_models["nli-c"])])
    config = load_config(root / "workbench.toml")
    pipeline = pipeline_for(config)
    before = mlm.CALLS["forward"]
    result = pipeline.run("queue")
    ws = Workspace(config.path("workspace"))
    filtered = ws.read("filter").to_pylist()
    queue = ws.read("queue").to_pylist()
    fluency = ws.read("fluency").to_pylist()
    adversarial = {r["hypothesis_id"]: r["hypothesis"] for r in filtered if r["adversarial"]}
    kept = {r["hypothesis"] for r in ws.read("generate").to_pylist() if r["kept"]}
    assert len(adversarial) < len(kept)  # filtering removed some: those are never scored
    assert {r["hypothesis_id"] for r in fluency} == set(adversarial) == {i["item_id"] for i in queue}
    assert all(r["pll"] < 0 and r["n_tokens"] > 0 for r in fluency)
    assert {i["item_id"]: i["fluency"] for i in queue} == {r["hypothesis_id"]: r["pll_per_token"] for r in fluency}
    # One masked pass per token of each unique queue hypothesis, batched: never more forward
    # passes than those tokens.
    assert 0 < mlm.CALLS["forward"] - before <= sum(r["n_tokens"] for r in fluency)
    assert result["items"] == len(adversarial)
    again = pipeline.run("fluency", force=True)
    assert again["computed_pll"] == 0 and again["model_loaded"] is False
